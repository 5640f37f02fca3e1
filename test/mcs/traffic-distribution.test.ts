import { describe, expect, it } from 'vitest';
import type { TrafficDistribution, UpstreamEndpoint } from '../../src/ir/route-table.ts';
import type { LocalIdentity } from '../../src/mcs/cluster-identity.ts';
import {
  buildTiers,
  localityOf,
  parseTrafficDistribution,
  type TierName,
} from '../../src/mcs/traffic-distribution.ts';

function endpoint(
  key: string,
  cluster: string,
  zone?: string,
  region?: string,
  node?: string,
): UpstreamEndpoint {
  const [address = '', port = '0'] = key.split(':');
  return {
    key,
    address,
    port: Number(port),
    cluster,
    ...(zone ? { zone } : {}),
    ...(region ? { region } : {}),
    ...(node ? { node } : {}),
    ready: true,
    weight: 1,
  };
}

const gateway: LocalIdentity = { cluster: 'home', zone: 'za', region: 'r1', node: 'n1' };

describe('parseTrafficDistribution', () => {
  const rows: [string | undefined, TrafficDistribution, boolean][] = [
    [undefined, 'Default', false],
    ['', 'Default', false],
    ['PreferSameZone', 'PreferSameZone', false],
    ['PreferClose', 'PreferSameZone', false],
    ['PreferSameNode', 'PreferSameNode', false],
    ['preferclose', 'Default', true],
    ['Topology', 'Default', true],
  ];
  it.each(rows)('%s -> %s (warns: %s)', (value, policy, warns) => {
    const parsed = parseTrafficDistribution(value, 'ServiceImport/ns/x');
    expect(parsed.policy).toBe(policy);
    expect(parsed.warning?.code).toBe(warns ? 'UnknownTrafficDistribution' : undefined);
    if (warns) expect(parsed.warning?.message).toContain(`"${value}"`);
  });
});

describe('localityOf', () => {
  // [description, endpoint (cluster, zone, region, node), policy, identity, expected tier]
  const rows: [
    string,
    [string, (string | undefined)?, string?, string?],
    TrafficDistribution,
    LocalIdentity,
    TierName,
  ][] = [
    ['same node, PreferSameNode', ['home', 'za', 'r1', 'n1'], 'PreferSameNode', gateway, 'node'],
    ['same node, PreferSameZone', ['home', 'za', 'r1', 'n1'], 'PreferSameZone', gateway, 'zone'],
    ['same node, Default', ['home', 'za', 'r1', 'n1'], 'Default', gateway, 'all'],
    ['same node name in another cluster', ['away', 'za', 'r1', 'n1'], 'PreferSameNode', gateway, 'zone'],
    ['other node, same zone', ['home', 'za', 'r1', 'n2'], 'PreferSameNode', gateway, 'zone'],
    ['other zone, local cluster', ['home', 'zb', 'r1', 'n2'], 'PreferSameNode', gateway, 'cluster'],
    ['local cluster, no zone', ['home', undefined, 'r1'], 'PreferSameZone', gateway, 'cluster'],
    ['same zone in another cluster', ['away', 'za', 'r1'], 'PreferSameZone', gateway, 'zone'],
    ['same zone, region unknown', ['away', 'za'], 'PreferSameZone', gateway, 'zone'],
    ['same zone name, other region', ['away', 'za', 'r2'], 'PreferSameZone', gateway, 'clusterset'],
    ['other cluster, same region', ['away', 'zb', 'r1'], 'PreferSameZone', gateway, 'region'],
    ['other cluster, same region', ['away', 'zb', 'r1'], 'PreferSameNode', gateway, 'region'],
    ['other cluster, other region', ['away', 'zb', 'r2'], 'PreferSameZone', gateway, 'clusterset'],
    ['other cluster, region unknown', ['away', 'zb'], 'PreferSameZone', gateway, 'clusterset'],
    ['gateway without zone', ['home', 'za'], 'PreferSameZone', { cluster: 'home' }, 'cluster'],
    [
      'gateway without node',
      ['home', 'za', 'r1', 'n1'],
      'PreferSameNode',
      { cluster: 'home', zone: 'za' },
      'zone',
    ],
    [
      'gateway without region',
      ['away', 'zb', 'r1'],
      'PreferSameZone',
      { cluster: 'home', zone: 'za' },
      'clusterset',
    ],
    ['unnamed local cluster', ['local', 'zb'], 'PreferSameZone', { zone: 'za' }, 'cluster'],
  ];
  it.each(rows)('%s', (_name, [cluster, zone, region, node], policy, identity, tier) => {
    expect(localityOf(endpoint('10.0.0.1:80', cluster, zone, region, node), policy, identity)).toBe(tier);
  });
});

describe('buildTiers', () => {
  const endpoints = [
    endpoint('10.9.0.1:80', 'far', 'eu-a', 'r2'),
    endpoint('10.1.0.1:80', 'near', 'zb', 'r1'),
    endpoint('10.0.0.2:80', 'home', 'zb', 'r1', 'n2'),
    endpoint('10.0.0.1:80', 'home', 'za', 'r1', 'n1'),
    endpoint('10.1.0.2:80', 'near', 'za', 'r1'),
    endpoint('10.0.0.3:80', 'home', 'za', 'r1', 'n3'),
  ];
  const view = (policy: TrafficDistribution, eps = endpoints, identity = gateway) => {
    const built = buildTiers(eps, policy, identity, 'ServiceImport/ns/x:80');
    return {
      tiers: built.tierNames.map(
        (name, i) => `${name}=${(built.tiers[i] ?? []).map((e) => e.key).join(',')}`,
      ),
      warnings: built.warnings.map((w) => w.code),
    };
  };

  it('PreferSameNode: node, zone, cluster, region, clusterset; input order kept inside a tier', () => {
    expect(view('PreferSameNode').tiers).toEqual([
      'node=10.0.0.1:80',
      'zone=10.1.0.2:80,10.0.0.3:80',
      'cluster=10.0.0.2:80',
      'region=10.1.0.1:80',
      'clusterset=10.9.0.1:80',
    ]);
  });

  it('PreferSameZone: zone, cluster, region, clusterset', () => {
    expect(view('PreferSameZone').tiers).toEqual([
      'zone=10.0.0.1:80,10.1.0.2:80,10.0.0.3:80',
      'cluster=10.0.0.2:80',
      'region=10.1.0.1:80',
      'clusterset=10.9.0.1:80',
    ]);
  });

  it('Default: one tier with every endpoint of every cluster', () => {
    expect(view('Default').tiers).toEqual([
      'all=10.9.0.1:80,10.1.0.1:80,10.0.0.2:80,10.0.0.1:80,10.1.0.2:80,10.0.0.3:80',
    ]);
  });

  it('drops empty tiers and keeps tierNames aligned', () => {
    const remoteOnly = [
      endpoint('10.9.0.1:80', 'far', 'eu-a', 'r2'),
      endpoint('10.1.0.1:80', 'near', 'zb', 'r1'),
    ];
    expect(view('PreferSameNode', remoteOnly).tiers).toEqual([
      'region=10.1.0.1:80',
      'clusterset=10.9.0.1:80',
    ]);
    expect(view('PreferSameZone', []).tiers).toEqual([]);
  });

  it('warns once about endpoints without a zone, only when the policy looks at zones', () => {
    const eps = [
      endpoint('10.0.0.1:80', 'home'),
      endpoint('10.0.0.2:80', 'home'),
      endpoint('10.0.0.3:80', 'home', 'za'),
    ];
    const zoned = buildTiers(eps, 'PreferSameZone', gateway, 'Service/ns/x:80');
    expect(zoned.warnings).toEqual([
      {
        code: 'EndpointWithoutZone',
        message: 'Service/ns/x:80: 2 of 3 endpoints have no zone; they never count as same-zone',
      },
    ]);
    expect(view('Default', eps).warnings).toEqual([]);
  });
});
