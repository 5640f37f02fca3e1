import { pino } from 'pino';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { Reconciler } from '../../src/controller/reconciler.ts';
import type { TranslationResult } from '../../src/gateway/translate.ts';
import type { AnyResource } from '../../src/snapshot/resources.ts';
import { Snapshot } from '../../src/snapshot/snapshot.ts';

const options = {
  controllerName: 'example.net/gw',
  identity: {},
  serviceImportKinds: [{ group: 'multicluster.x-k8s.io', kind: 'ServiceImport' }],
  gatewayAddresses: ['127.0.0.1'],
  eastWest: false,
};

const gatewayClass = (generation: number): AnyResource => ({
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'GatewayClass',
  metadata: { name: 'cls', generation },
  spec: { controllerName: 'example.net/gw' },
});

describe('Reconciler', () => {
  it('coalesces a burst of snapshots while a table is being applied, ending on the latest', async () => {
    const applied: TranslationResult[] = [];
    let release!: () => void;
    const firstApply = new Promise<void>((resolve) => {
      release = resolve;
    });
    const reconciler = new Reconciler({
      translateOptions: () => options,
      logger: pino({ level: 'silent' }),
      registry: new Registry(),
      apply: async (result) => {
        applied.push(result);
        if (applied.length === 1) await firstApply;
      },
    });
    for (let generation = 1; generation <= 100; generation++)
      reconciler.submit(new Snapshot([gatewayClass(generation)]));
    release();
    await reconciler.settled();
    expect(applied.length).toBe(2);
    expect(applied.at(-1)?.statuses[0]).toMatchObject({ kind: 'GatewayClass', name: 'cls', generation: 100 });
    expect(reconciler.last?.result).toBe(applied.at(-1));
  });

  it('counts translations and exposes warnings by code', async () => {
    const registry = new Registry();
    const reconciler = new Reconciler({
      translateOptions: () => options,
      logger: pino({ level: 'silent' }),
      registry,
      apply: async () => {},
    });
    const serviceImport: AnyResource = {
      apiVersion: 'multicluster.x-k8s.io/v1alpha1',
      kind: 'ServiceImport',
      metadata: { name: 'web', namespace: 'ns' },
      spec: { ports: [{ port: 80 }], trafficDistribution: 'PreferNearby' },
    };
    const objects: AnyResource[] = [
      gatewayClass(1),
      serviceImport,
      {
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'Gateway',
        metadata: { name: 'gw', namespace: 'ns' },
        spec: { gatewayClassName: 'cls', listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }] },
      },
      {
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'HTTPRoute',
        metadata: { name: 'r', namespace: 'ns' },
        spec: {
          parentRefs: [{ name: 'gw' }],
          rules: [
            {
              backendRefs: [{ group: 'multicluster.x-k8s.io', kind: 'ServiceImport', name: 'web', port: 80 }],
            },
          ],
        },
      },
    ];
    reconciler.submit(new Snapshot(objects));
    await reconciler.settled();
    const metrics = await registry.metrics();
    expect(metrics).toMatch(/clusterset_gateway_translations_total\{result="ok"\} 1/);
    expect(metrics).toMatch(/clusterset_gateway_config_warnings\{code="UnknownTrafficDistribution"\} 1/);
  });
});
