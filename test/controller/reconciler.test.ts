import { pino } from 'pino';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { Reconciler } from '../../src/controller/reconciler.ts';
import type { TranslationResult } from '../../src/gateway/translate.ts';
import type { AnyResource } from '../../src/snapshot/resources.ts';
import { Snapshot } from '../../src/snapshot/snapshot.ts';
import {
  CONTROLLER,
  gatewayClass as clusterset,
  gateway,
  httpRoute,
  importedSlice,
  service,
  serviceImport,
  serviceSlice,
} from '../support/manifests.ts';

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

  it('slice-only snapshots that replace each other while a table is applied keep every change (no translation)', async () => {
    const registry = new Registry();
    const endpointSets: string[][] = [];
    let release!: () => void;
    const firstApply = new Promise<void>((resolve) => {
      release = resolve;
    });
    const reconciler = new Reconciler({
      translateOptions: () => ({ ...options, controllerName: CONTROLLER }),
      logger: pino({ level: 'silent' }),
      registry,
      apply: () => firstApply,
      applyEndpoints: async (backends) => {
        for (const b of backends) endpointSets.push(b.tiers.flat().map((e) => `${e.address}:${e.port}`));
      },
    });
    const slice = (name: string, port: number, of = 'web') =>
      serviceSlice(name, of, 'default', { port, pod: name }) as AnyResource & { kind: 'EndpointSlice' };
    const a = slice('web-a', 1);
    const s0 = new Snapshot([
      clusterset() as AnyResource,
      gateway('gw', 'default', [{ name: 'http', port: 80, protocol: 'HTTP' }]) as AnyResource,
      httpRoute('web', 'default', {
        parentRefs: [{ name: 'gw' }],
        rules: [
          {
            matches: [{ path: { type: 'PathPrefix', value: '/api' } }],
            backendRefs: [{ name: 'api', port: 80 }],
          },
          { backendRefs: [{ name: 'web', port: 80 }] },
        ],
      }) as AnyResource,
      service('web', 'default') as AnyResource,
      service('api', 'default') as AnyResource,
      a,
    ]);
    reconciler.submit(s0);
    // While s0's table is being applied: api gets a slice, then web's changes; s2 replaces s1 unreconciled.
    const b = slice('api-b', 2, 'api');
    const s1 = Snapshot.withEndpointSlices(s0, [{ before: undefined, after: b }]);
    const a2 = slice('web-a', 3);
    const s2 = Snapshot.withEndpointSlices(s1, [{ before: a, after: a2 }]);
    reconciler.submit(s1);
    reconciler.submit(s2);
    release();
    await reconciler.settled();
    const translations = await registry.getSingleMetric('clusterset_gateway_translations_total')?.get();
    expect(translations?.values.find((v) => v.labels.result === 'ok')?.value).toBe(1);
    expect(endpointSets.map((set) => set.map((e) => e.split(':')[1])).sort()).toEqual([['2'], ['3']]);
    expect(reconciler.last?.snapshot).toBe(s2);
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

  it('replaces the warnings of exactly the backends an endpoint-only change refreshed, by owner', async () => {
    const registry = new Registry();
    const reconciler = new Reconciler({
      translateOptions: () => ({ ...options, controllerName: CONTROLLER }),
      logger: pino({ level: 'silent' }),
      registry,
      apply: async () => {},
      applyEndpoints: async () => {},
    });
    const s0 = new Snapshot([
      clusterset() as AnyResource,
      gateway('gw', 'ns', [{ name: 'http', port: 80, protocol: 'HTTP' }]) as AnyResource,
      httpRoute('web', 'ns', {
        parentRefs: [{ name: 'gw' }],
        rules: ['web', 'web-2'].map((name) => ({
          matches: [{ path: { type: 'PathPrefix', value: `/${name}` } }],
          backendRefs: [{ group: 'multicluster.x-k8s.io', kind: 'ServiceImport', name, port: 80 }],
        })),
      }) as AnyResource,
      serviceImport('web', 'ns') as AnyResource,
      serviceImport('web-2', 'ns') as AnyResource,
    ]);
    reconciler.submit(s0);
    await reconciler.settled();
    const withoutEndpoints = () =>
      (reconciler.last?.result.warnings ?? [])
        .filter((w) => w.code === 'ServiceImportWithoutEndpoints')
        .map((w) => w.owner);
    expect(withoutEndpoints()).toEqual(['ServiceImport/ns/web', 'ServiceImport/ns/web-2']);

    const arrived = importedSlice('web-west', 'web', 'ns', 'west', { port: 8080 }) as AnyResource & {
      kind: 'EndpointSlice';
    };
    reconciler.submit(Snapshot.withEndpointSlices(s0, [{ before: undefined, after: arrived }]));
    await reconciler.settled();
    const translations = await registry.getSingleMetric('clusterset_gateway_translations_total')?.get();
    expect(translations?.values.find((v) => v.labels.result === 'ok')?.value).toBe(1);
    expect(withoutEndpoints()).toEqual(['ServiceImport/ns/web-2']);
  });
});
