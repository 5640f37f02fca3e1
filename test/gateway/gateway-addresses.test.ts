import { describe, expect, it } from 'vitest';
import { DEFAULT_CONTROLLER_NAME, type TranslateOptions } from '../../src/gateway/options.ts';
import { translate } from '../../src/gateway/translate.ts';
import type { GatewayStatus } from '../../src/ir/status.ts';
import type { AnyResource } from '../../src/snapshot/resources.ts';
import { Snapshot } from '../../src/snapshot/snapshot.ts';

const OPTIONS: TranslateOptions = {
  controllerName: DEFAULT_CONTROLLER_NAME,
  identity: {},
  serviceImportKinds: [],
  gatewayAddresses: ['127.0.0.1'],
  eastWest: false,
};

function gateway(name: string): AnyResource {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'Gateway',
    metadata: { name, namespace: 'infra' },
    spec: { gatewayClassName: 'ours', listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }] },
  };
}

const snapshot = new Snapshot([
  {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'GatewayClass',
    metadata: { name: 'ours' },
    spec: { controllerName: DEFAULT_CONTROLLER_NAME },
  },
  gateway('same-namespace'),
  gateway('all-namespaces'),
]);

function reportedAddresses(options: TranslateOptions): string[] {
  return translate(snapshot, options)
    .statuses.filter((s) => s.kind === 'Gateway')
    .map((s) => (s.status as GatewayStatus).addresses.map((a) => `${s.name}=${a.type}:${a.value}`).join());
}

describe('gateway addresses', () => {
  it('shares options.gatewayAddresses and one port by default', () => {
    const { table } = translate(snapshot, OPTIONS);
    expect(table.ports.map((p) => [p.port, p.address, p.gateways])).toEqual([
      [80, undefined, ['infra/all-namespaces', 'infra/same-namespace']],
    ]);
    expect(reportedAddresses(OPTIONS)).toEqual([
      'all-namespaces=IPAddress:127.0.0.1',
      'same-namespace=IPAddress:127.0.0.1',
    ]);
  });

  it('gives a Gateway its own stable loopback address only when it would share a port with another', () => {
    const options = { ...OPTIONS, loopbackAddressPerGateway: true };
    const { table } = translate(snapshot, options);
    const byGateway = new Map(table.ports.map((p) => [p.gateways.join(), p.address]));
    expect(table.ports).toHaveLength(2);
    // The first Gateway by namespace/name keeps the shared address; the one that would collide moves.
    expect(byGateway.get('infra/all-namespaces')).toBeUndefined();
    const own = byGateway.get('infra/same-namespace');
    expect(own).toMatch(/^127\.\d+\.\d+\.\d+$/);
    expect(own).not.toBe('127.0.0.1');
    expect(reportedAddresses(options)).toEqual([
      'all-namespaces=IPAddress:127.0.0.1',
      `same-namespace=IPAddress:${own}`,
    ]);

    // Alone, a Gateway keeps the shared address; the address a colliding Gateway gets is stable.
    const alone = translate(new Snapshot([...snapshot.gatewayClasses, gateway('same-namespace')]), options);
    expect(alone.table.ports.map((p) => p.address)).toEqual([undefined]);
    const third = translate(
      new Snapshot([...snapshot.list('GatewayClass'), ...snapshot.gateways, gateway('zeta')]),
      options,
    );
    expect(
      new Map(third.table.ports.map((p) => [p.gateways.join(), p.address])).get('infra/same-namespace'),
    ).toBe(own);
  });
});
