import { pino } from 'pino';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { Reconciler } from '../../src/controller/reconciler.ts';
import { backendIdsByOwner, withBackends } from '../../src/controller/table-diff.ts';
import type { TranslationResult } from '../../src/gateway/translate.ts';
import { type BackendCluster, backendOwner, type RouteTable } from '../../src/ir/route-table.ts';
import type { AnyResource } from '../../src/snapshot/resources.ts';
import { Snapshot } from '../../src/snapshot/snapshot.ts';
import { CONTROLLER, gateway, gatewayClass, httpRoute, service, serviceSlice } from '../support/manifests.ts';

const options = {
  controllerName: CONTROLLER,
  identity: {},
  serviceImportKinds: [{ group: 'multicluster.x-k8s.io', kind: 'ServiceImport' }],
  gatewayAddresses: ['127.0.0.1'],
  eastWest: false,
};

const slice = (name: string, port: number, of: string) =>
  serviceSlice(name, of, 'default', { port, pod: name }) as AnyResource & { kind: 'EndpointSlice' };

/** web and web-2 (a name another is the prefix of), each with one endpoint. */
function world(webPort: number): { snapshot: Snapshot; web: AnyResource & { kind: 'EndpointSlice' } } {
  const web = slice('web-a', webPort, 'web');
  const snapshot = new Snapshot([
    gatewayClass() as AnyResource,
    gateway('gw', 'default', [{ name: 'http', port: 80, protocol: 'HTTP' }]) as AnyResource,
    httpRoute('web', 'default', {
      parentRefs: [{ name: 'gw' }],
      rules: [
        {
          matches: [{ path: { type: 'PathPrefix', value: '/2' } }],
          backendRefs: [{ name: 'web-2', port: 80 }],
        },
        { backendRefs: [{ name: 'web', port: 80 }] },
      ],
    }) as AnyResource,
    service('web', 'default') as AnyResource,
    service('web-2', 'default') as AnyResource,
    web,
    slice('web-2-a', 9, 'web-2'),
  ]);
  return { snapshot, web };
}

const ports = (backend: BackendCluster | undefined) => backend?.tiers.flat().map((e) => e.port);

describe('the routing table diff', () => {
  it('keys backends by their typed owner, not by parsing the id', () => {
    const backend = { id: 'Service/default/web:80', kind: 'Service', namespace: 'default', name: 'web' };
    expect(backendOwner(backend as BackendCluster)).toBe('Service/default/web');
    const table = { backends: { [backend.id]: backend } } as unknown as RouteTable;
    expect([...backendIdsByOwner(table)]).toEqual([['Service/default/web', ['Service/default/web:80']]]);
  });

  it('withBackends makes a new frozen table sharing the unchanged parts; the old one stays as it was', () => {
    const a = { id: 'Service/default/a:80', kind: 'Service', namespace: 'default', name: 'a', tiers: [] };
    const b = { id: 'Service/default/b:80', kind: 'Service', namespace: 'default', name: 'b', tiers: [] };
    const table = { ports: [], backends: { [a.id]: a, [b.id]: b } } as unknown as RouteTable;
    const copy = structuredClone(table);
    const a2 = { ...a, tiers: [[{ address: '10.0.0.1', port: 1 }]] } as unknown as BackendCluster;
    const next = withBackends(table, [a2]);
    expect(table).toEqual(copy);
    expect(next.backends[a.id]).toBe(a2);
    expect(next.backends[b.id]).toBe(b);
    expect(next.ports).toBe(table.ports);
    expect(Object.isFrozen(next)).toBe(true);
    expect(Object.isFrozen(next.backends)).toBe(true);
    expect(() => withBackends(table, [{ ...a2, id: 'Service/default/c:80' }])).toThrow(/not in the table/);
  });

  it('an endpoint-only change publishes a new table and leaves the one in force untouched', async () => {
    const applied: TranslationResult[] = [];
    const tables: RouteTable[] = [];
    const reconciler = new Reconciler({
      translateOptions: () => options,
      logger: pino({ level: 'silent' }),
      registry: new Registry(),
      apply: async (result) => {
        applied.push(result);
        tables.push(result.table);
      },
      applyEndpoints: async (_backends, table) => {
        tables.push(table);
      },
    });
    const { snapshot: s0, web } = world(1);
    reconciler.submit(s0);
    await reconciler.settled();
    const first = tables[0] as RouteTable;
    const before = structuredClone(first);
    reconciler.submit(Snapshot.withEndpointSlices(s0, [{ before: web, after: slice('web-a', 2, 'web') }]));
    await reconciler.settled();

    expect(applied).toHaveLength(1);
    const second = tables[1] as RouteTable;
    expect(second).not.toBe(first);
    expect(first).toEqual(before);
    expect(ports(first.backends['Service/default/web:80'])).toEqual([1]);
    expect(ports(second.backends['Service/default/web:80'])).toEqual([2]);
    // web-2 (whose owner key web is a prefix of) is not resolved again: the same object.
    expect(second.backends['Service/default/web-2:80']).toBe(first.backends['Service/default/web-2:80']);
    expect(Object.isFrozen(second)).toBe(true);
    expect(reconciler.last?.result.table).toBe(second);
  });
});
