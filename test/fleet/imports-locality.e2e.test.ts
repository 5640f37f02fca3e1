import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EchoServer, startEchoServer } from '../../src/demo/echo/echo-server.ts';
import { freePort } from '../support/gateway-process.ts';
import { gateway, gatewayClass, yamlDocs } from '../support/manifests.ts';
import { type FleetGateway, startFleetGateway } from './fleet-pipeline.ts';
import { exportOf, InMemoryFleetMembers, memberView, serviceOf, sliceOf } from './member-fixtures.ts';

/**
 * Members' names and properties feed locality: the gateway runs in cluster east-1, zone east-1-a, region
 * us-east; the member called east-1 is its own cluster, a member whose properties say region us-east is the
 * region tier, the rest is the clusterset. With `trafficDistribution: PreferSameZone` on the exported Service,
 * the derived import's tiers are zone, cluster, region, clusterset, and the same-zone pod takes the traffic.
 */
const NS = 'shop';
const HOST = 'web.shop.svc.clusterset.local';

const PODS = [
  { pod: 'web-east-same-zone', cluster: 'east-1', zone: 'east-1-a' },
  { pod: 'web-east-other-zone', cluster: 'east-1', zone: 'east-1-b' },
  { pod: 'web-south', cluster: 'south-1', zone: 'south-1-a' },
  { pod: 'web-west', cluster: 'west-1', zone: 'west-1-a' },
] as const;
const REGION: Record<string, string> = { 'east-1': 'us-east', 'south-1': 'us-east', 'west-1': 'us-west' };

const servers = new Map<string, EchoServer>();
let gw: FleetGateway;
let eastWestPort: number;

beforeAll(async () => {
  for (const p of PODS) {
    servers.set(
      p.pod,
      await startEchoServer({
        host: '127.0.0.1',
        port: 0,
        identity: { namespace: NS, service: 'web', pod: p.pod, cluster: p.cluster, zone: p.zone },
      }),
    );
  }
  const members = ['east-1', 'south-1', 'west-1'].map((cluster) =>
    memberView(cluster, {
      exports: [exportOf(NS, 'web', '2026-01-01T00:00:00Z')],
      services: [serviceOf(NS, 'web', { trafficDistribution: 'PreferSameZone' })],
      slices: PODS.filter((p) => p.cluster === cluster).map((p) =>
        sliceOf(NS, 'web', p.pod, [{ ip: '127.0.0.1', port: servers.get(p.pod)?.port ?? 1, zone: p.zone }]),
      ),
      properties: { 'topology.kubernetes.io/region': REGION[cluster] as string },
    }),
  );
  eastWestPort = await freePort();
  gw = await startFleetGateway({
    manifests: yamlDocs(gatewayClass(), gateway('edge', NS, [])),
    members: new InMemoryFleetMembers(members),
    eastWestPort,
    args: ['--cluster', 'east-1', '--zone', 'east-1-a', '--region', 'us-east'],
  });
});

afterAll(async () => {
  await gw?.close();
  for (const s of servers.values()) await s.close();
});

describe('fleet mode: members in locality tiers', () => {
  it('tiers the derived import by zone, the gateway’s own member cluster, the members’ region, then the rest', () => {
    const backend = gw.reconciler.last?.result.table.backends['ServiceImport/shop/web:80'];
    expect(backend?.trafficDistribution).toBe('PreferSameZone');
    expect(
      backend?.tiers.map((tier) => tier.map((e) => `${e.cluster}/${e.zone}/${e.region ?? '?'}`)),
    ).toEqual([
      ['east-1/east-1-a/us-east'],
      ['east-1/east-1-b/us-east'],
      ['south-1/south-1-a/us-east'],
      ['west-1/west-1-a/us-west'],
    ]);
  });

  it('sends the east-west traffic to the same-zone pod', async () => {
    const seen = new Set<string>();
    for (let i = 0; i < 20; i++) {
      const res = await request(`http://127.0.0.1:${eastWestPort}/`, { headers: { host: HOST } });
      const body = (await res.body.json()) as { pod?: string };
      expect(res.statusCode).toBe(200);
      if (body.pod) seen.add(body.pod);
    }
    expect(seen).toEqual(new Set(['web-east-same-zone']));
  });
});
