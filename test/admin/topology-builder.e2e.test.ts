import { describe, expect, it } from 'vitest';
import {
  buildTopology,
  type ServedCounts,
  servedKey,
  type TopologyInput,
} from '../../src/admin/topology-builder.ts';
import type { BalancerState } from '../../src/lb/index.ts';
import { backend, endpoint, entry, IDENTITY, table } from './fixtures.ts';

const near = [
  endpoint('east-1', 'us-east-1a', 'node-a', 'web-a1'),
  endpoint('east-1', 'us-east-1a', 'node-b', 'web-a2'),
];
const sameCluster = [endpoint('east-1', 'us-east-1b', 'node-c', 'web-b1')];
const far = [
  endpoint('west-1', 'us-west-1a', 'w-node', 'web-w1'),
  endpoint('west-1', undefined, undefined, 'web-w2'),
];
const web = backend('web', [near, sameCluster, far], ['zone', 'cluster', 'clusterset']);
const api = backend('api', [], [], 'Default');
const routes = [
  entry('shop/web', '/', [
    [web.id, 3],
    [api.id, 1],
  ]),
];

function state(ejected: readonly string[], shares: number[]): BalancerState {
  return {
    endpoints: web.tiers.flatMap((tier, t) =>
      tier.map((e) => ({
        key: e.key,
        tier: t,
        healthy: !ejected.includes(e.key),
        ...(ejected.includes(e.key) ? { ejectedUntilMs: 99_000 } : {}),
        outstanding: 0,
      })),
    ),
    tierShares: shares,
  };
}

function input(overrides: Partial<TopologyInput> = {}): TopologyInput {
  return {
    table: table([web, api], routes),
    balancers: { [web.id]: state([], [1, 0, 0]) },
    identity: IDENTITY,
    served: new Map(),
    windowSeconds: 10,
    nowMs: Date.UTC(2026, 0, 1),
    endpointListLimit: 50,
    notes: [],
    ...overrides,
  };
}

describe('buildTopology', () => {
  it('nests clusters, zones and nodes, the gateway own first and marked, missing zones shown as such', () => {
    const doc = buildTopology(input());
    expect(doc.gateway).toEqual({ cluster: 'east-1', region: 'us-east', zone: 'us-east-1a', node: 'node-a' });
    const view = doc.backends.find((b) => b.id === web.id)!;
    expect(view.clusters.map((c) => [c.name, c.local])).toEqual([
      ['east-1', true],
      ['west-1', false],
    ]);
    const east = view.clusters[0]!;
    expect(east.zones.map((z) => [z.name, z.local, z.endpointCount])).toEqual([
      ['us-east-1a', true, 2],
      ['us-east-1b', false, 1],
    ]);
    expect(east.zones[0]!.nodes.map((n) => [n.name, n.local])).toEqual([
      ['node-a', true],
      ['node-b', false],
    ]);
    // An endpoint without a zone sits in a zone box named null ("no zone" on the page), after the named ones.
    expect(view.clusters[1]!.zones.map((z) => z.name)).toEqual(['us-west-1a', null]);
    expect(view.endpointCount).toBe(5);
    expect(view.trafficDistribution).toBe('PreferSameZone');
  });

  it('gives each backend its backendRef weights and the share they make of the rule', () => {
    const doc = buildTopology(input());
    const byId = new Map(doc.backends.map((b) => [b.id, b]));
    expect(byId.get(web.id)!.usedBy).toEqual([{ route: 'shop/web', ruleIndex: 0, weight: 3, share: 0.75 }]);
    expect(byId.get(api.id)!.usedBy).toEqual([{ route: 'shop/web', ruleIndex: 0, weight: 1, share: 0.25 }]);
    expect(byId.get(api.id)!.tiers).toEqual([]);
    expect(doc.listeners[0]!.virtualHosts[0]!.routes[0]!.backends.map((b) => b.share)).toEqual([0.75, 0.25]);
  });

  it('lists TCP and UDP listeners with their routes, and counts their backends as used by them', () => {
    const db = backend('db', [near], ['zone']);
    const ref = (id: string, weight: number) => ({
      weight,
      target: { kind: 'Backend' as const, id },
      filters: [],
    });
    const doc = buildTopology(
      input({
        table: {
          ...table([web, api, db], routes),
          layer4Ports: [
            {
              port: 5432,
              protocol: 'TCP',
              listener: 'shop/gw/postgres',
              gateway: 'shop/gw',
              routes: [
                { route: 'shop/pg', backends: [ref(db.id, 1)] },
                { route: 'shop/pg-late', backends: [ref(web.id, 1)] },
              ],
            },
            {
              port: 53,
              protocol: 'UDP',
              listener: 'shop/gw/dns',
              gateway: 'shop/gw',
              routes: [
                {
                  route: 'shop/dns',
                  backends: [
                    { weight: 1, target: { kind: 'Invalid', reason: 'no such Service' }, filters: [] },
                  ],
                },
              ],
            },
          ],
        },
      }),
    );
    const tcp = doc.listeners.find((l) => l.id === 'shop/gw/postgres')!;
    expect([tcp.protocol, tcp.port]).toEqual(['TCP', 5432]);
    const [first, late] = tcp.virtualHosts[0]!.routes;
    expect(first).toMatchObject({ route: 'shop/pg', backends: [{ backend: db.id, share: 1 }] });
    expect(first!.match).toBeUndefined();
    expect(first!.standby).toBeUndefined();
    expect(late).toMatchObject({ route: 'shop/pg-late', standby: true });
    const udp = doc.listeners.find((l) => l.id === 'shop/gw/dns')!;
    expect(udp.protocol).toBe('UDP');
    expect(udp.virtualHosts[0]!.routes[0]!.backends).toEqual([
      { invalid: 'no such Service', weight: 1, share: 1 },
    ]);
    // The TCP route's backend is a backend box like any other: clusters, zones and endpoint health.
    const dbView = doc.backends.find((b) => b.id === db.id)!;
    expect(dbView.usedBy).toEqual([{ route: 'shop/pg', ruleIndex: 0, weight: 1, share: 1 }]);
    expect(dbView.clusters[0]!.zones[0]!.nodes.flatMap((n) => n.endpoints.map((e) => e.health))).toHaveLength(
      2,
    );
    expect(doc.backends.find((b) => b.id === web.id)!.usedBy.map((u) => u.route)).toEqual([
      'shop/web',
      'shop/pg-late',
    ]);
  });

  it('shows configured shares from the balancer and served shares from the (cluster, zone) counters', () => {
    const served: ServedCounts = new Map([
      [servedKey(web.id, 'east-1', 'us-east-1a'), { answered: 70, failed: 4 }],
      [servedKey(web.id, 'east-1', 'us-east-1b'), { answered: 30, failed: 0 }],
      [servedKey('other', 'east-1', 'us-east-1a'), { answered: 1000, failed: 0 }],
    ]);
    const doc = buildTopology(
      input({ served, balancers: { [web.id]: state([near[0]!.key], [0.7, 0.3, 0]) } }),
    );
    const tiers = doc.backends.find((b) => b.id === web.id)!.tiers;
    expect(tiers.map((t) => [t.name, t.configuredShare, t.healthy, t.endpoints])).toEqual([
      ['zone', 0.7, 1, 2],
      ['cluster', 0.3, 1, 1],
      ['clusterset', 0, 2, 2],
    ]);
    expect(tiers.map((t) => t.served)).toEqual([
      { answered: 70, failed: 4, share: 0.7 },
      { answered: 30, failed: 0, share: 0.3 },
      { answered: 0, failed: 0, share: 0 },
    ]);
  });

  it('counts a node tier together with the zone tier it shares a cluster and zone with', () => {
    const onNode = [endpoint('east-1', 'us-east-1a', 'node-a')];
    const sameZone = [endpoint('east-1', 'us-east-1a', 'node-b')];
    const b = backend('node', [onNode, sameZone, far], ['node', 'zone', 'clusterset'], 'PreferSameNode');
    const served = new Map([
      [servedKey(b.id, 'east-1', 'us-east-1a'), { answered: 9, failed: 0 }],
      [servedKey(b.id, 'west-1', 'us-west-1a'), { answered: 1, failed: 0 }],
    ]);
    const doc = buildTopology(input({ table: table([b], []), balancers: {}, served }));
    const tiers = doc.backends[0]!.tiers;
    expect(tiers.map((t) => t.served)).toEqual([
      { answered: 9, failed: 0, share: 0.9, sharedWith: [1] },
      { answered: 9, failed: 0, share: 0.9, sharedWith: [0] },
      { answered: 1, failed: 0, share: 0.1 },
    ]);
  });

  it('says which signal made an endpoint unhealthy, using the health model fields when present', () => {
    const withModel: BalancerState = {
      ...state([near[0]!.key], [0.7, 0.3, 0]),
      endpoints: state([near[0]!.key], [0.7, 0.3, 0]).endpoints.map((e) =>
        e.key === near[1]!.key
          ? { ...e, healthy: false, health: 'unhealthy', signal: 'probe', since: '1970-01-01T00:00:05.000Z' }
          : e,
      ),
    };
    const doc = buildTopology(input({ balancers: { [web.id]: withModel } }));
    const eps = doc.backends
      .find((b) => b.id === web.id)!
      .clusters[0]!.zones[0]!.nodes.flatMap((n) => n.endpoints);
    expect(eps.map((e) => [e.pod, e.healthy, e.health, e.signal, e.since])).toEqual([
      ['web-a1', false, 'ejected', 'outlier', undefined],
      ['web-a2', false, 'unhealthy', 'probe', '1970-01-01T00:00:05.000Z'],
    ]);
  });

  it('marks health unknown when this process has no balancer state (--workers)', () => {
    const doc = buildTopology(input({ balancers: undefined, notes: ['per worker'] }));
    const eps = doc.backends
      .find((b) => b.id === web.id)!
      .clusters.flatMap((c) => c.zones.flatMap((z) => z.nodes.flatMap((n) => n.endpoints)));
    expect(new Set(eps.map((e) => e.health))).toEqual(new Set(['unknown']));
    expect(doc.notes).toEqual(['per worker']);
    expect(buildTopology(input({ table: undefined })).notes).toEqual(['no routing table applied yet']);
  });

  it('stays small at 10,000 endpoints: a zone past the limit lists only its unhealthy endpoints', () => {
    const many = Array.from({ length: 10_000 }, (_, i) =>
      endpoint('east-1', 'us-east-1a', `node-${i % 100}`),
    );
    const big = backend('big', [many], ['zone']);
    const sick = new Set(many.slice(0, 120).map((e) => e.key));
    const balancer: BalancerState = {
      endpoints: many.map((e) => ({ key: e.key, tier: 0, healthy: !sick.has(e.key), outstanding: 0 })),
      tierShares: [1],
    };
    const doc = buildTopology(input({ table: table([big], []), balancers: { [big.id]: balancer } }));
    const zone = doc.backends[0]!.clusters[0]!.zones[0]!;
    expect(zone.endpointCount).toBe(10_000);
    expect(zone.healthyCount).toBe(9_880);
    expect(zone.nodes).toHaveLength(100);
    const listed = zone.nodes.flatMap((n) => n.endpoints);
    expect(listed).toHaveLength(50);
    expect(listed.every((e) => !e.healthy)).toBe(true);
    expect(zone.nodes.every((n) => n.aggregated)).toBe(true);
    expect(JSON.stringify(doc).length).toBeLessThan(64 * 1024);
  });
});
