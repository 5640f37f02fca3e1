import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RestartablePod, startPod, stopPod } from '../support/echo.ts';
import { eventually, freePort, type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import {
  gateway,
  gatewayClass,
  httpRoute,
  importedSlice,
  serviceImport,
  yamlDocs,
} from '../support/manifests.ts';

/**
 * Issue 30, "Done when": simulated clusters in three regions and two jurisdictions behind a ClusterSelectionPolicy
 * (local cluster, then the gateway's region, then its jurisdiction, fallback None). Traffic goes local -> same
 * region -> same jurisdiction as clusters stop, never to the cluster outside the boundary, and 503 once every
 * allowed cluster is down, on the Gateway listener and on the east-west listener alike; `fallback: Any` opens it.
 */
const NS = 'shop';

interface Pod extends RestartablePod {
  readonly cluster: string;
  readonly region: string;
  readonly jurisdiction: string;
}

const PODS: Pod[] = [
  { cluster: 'paris', region: 'eu-west', jurisdiction: 'eu', port: 0 },
  { cluster: 'dublin', region: 'eu-west', jurisdiction: 'eu', port: 0 },
  { cluster: 'frankfurt', region: 'eu-central', jurisdiction: 'eu', port: 0 },
  { cluster: 'virginia', region: 'us-east', jurisdiction: 'us', port: 0 },
];
const pod = (cluster: string) => PODS.find((p) => p.cluster === cluster)!;

const up = (p: Pod) =>
  startPod(p, {
    namespace: NS,
    service: 'shop',
    pod: `shop-${p.cluster}`,
    cluster: p.cluster,
    zone: `${p.region}-a`,
  });
const down = stopPod;

function policy(fallback: 'None' | 'Any'): unknown {
  return {
    apiVersion: 'policy.clusterset-gateway.io/v1alpha1',
    kind: 'ClusterSelectionPolicy',
    metadata: { name: 'eu-only', namespace: NS },
    spec: {
      targetRefs: [{ group: 'multicluster.x-k8s.io', kind: 'ServiceImport', name: 'shop' }],
      tiers: [
        { name: 'local', sameCluster: true },
        { name: 'region', sameProperty: 'topology.kubernetes.io/region' },
        { name: 'jurisdiction', sameProperty: 'jurisdiction' },
      ],
      fallback,
    },
  };
}

function profile(p: Pod): unknown {
  return {
    apiVersion: 'multicluster.x-k8s.io/v1alpha1',
    kind: 'ClusterProfile',
    metadata: { name: p.cluster, namespace: 'fleet' },
    spec: { displayName: p.cluster, clusterManager: { name: 'test' } },
    status: {
      properties: [
        { name: 'topology.kubernetes.io/region', value: p.region },
        { name: 'jurisdiction', value: p.jurisdiction },
      ],
    },
  };
}

describe('ClusterSelectionPolicy: tiers by cluster properties and a boundary traffic never crosses', () => {
  let gw: GatewayProcess;
  let port: number;
  let eastWestPort: number;
  const agent = new Agent({ keepAliveTimeout: 30_000, connections: 4 });
  /** Every cluster that answered any request of this test. */
  const servedBy = new Set<string>();

  const get = async (url: string, host?: string): Promise<{ status: number; cluster?: string }> => {
    const response = await request(url, { dispatcher: agent, ...(host ? { headers: { host } } : {}) });
    const text = await response.body.text();
    if (response.statusCode !== 200) return { status: response.statusCode };
    const cluster = (JSON.parse(text) as { cluster: string }).cluster;
    servedBy.add(cluster);
    return { status: 200, cluster };
  };
  const north = () => get(`http://127.0.0.1:${port}/`);
  const eastWest = () => get(`http://127.0.0.1:${eastWestPort}/`, `shop.${NS}.svc.clusterset.local`);
  /** Until ten requests in a row get this answer: health checks move traffic within a few intervals. */
  const settlesOn = async (expected: string | number, send = north) =>
    eventually(async () => {
      for (let i = 0; i < 10; i++) {
        const answer = await send();
        const got = typeof expected === 'number' ? answer.status : answer.cluster;
        if (got !== expected) throw new Error(`got ${got}, want ${expected}`);
      }
    }, 15_000);

  const manifests = (fallback: 'None' | 'Any') =>
    yamlDocs(
      gatewayClass(),
      gateway('edge', NS, [{ name: 'http', protocol: 'HTTP', port }]),
      serviceImport('shop', NS),
      httpRoute('shop', NS, {
        parentRefs: [{ name: 'edge' }],
        rules: [
          {
            backendRefs: [{ group: 'multicluster.x-k8s.io', kind: 'ServiceImport', name: 'shop', port: 80 }],
          },
        ],
      }),
      ...PODS.map(profile),
      ...PODS.map((p) => importedSlice(`shop-${p.cluster}`, 'shop', NS, p.cluster, { port: p.port })),
      policy(fallback),
    );

  beforeAll(async () => {
    for (const p of PODS) await up(p);
    port = await freePort();
    eastWestPort = await freePort();
    gw = await startGateway({
      args: [
        '--cluster',
        'paris',
        '--region',
        'eu-west',
        '--cluster-property',
        'jurisdiction=eu',
        '--east-west-port',
        String(eastWestPort),
        '--health-check-interval-ms',
        '200',
        '--health-check-timeout-ms',
        '100',
      ],
      manifests: { 'shop.yaml': manifests('None') },
    });
  }, 60_000);

  afterAll(async () => {
    await gw?.stop();
    await agent.close();
    for (const p of PODS) await down(p);
  });

  it('reports the policy accepted, with the clusters of each tier and none outside', async () => {
    await settlesOn('paris');
    const dump = JSON.parse((await gw.adminGet('/config_dump')).body) as {
      statuses: Record<
        string,
        { status: { conditions: { type: string; status: string }[]; tiers: unknown } }
      >;
    };
    const status = dump.statuses[`ClusterSelectionPolicy/${NS}/eu-only`]?.status;
    expect(status?.conditions.map((c) => `${c.type}=${c.status}`)).toEqual(['Accepted=True']);
    expect(status?.tiers).toEqual([
      { name: 'local', clusters: ['paris'] },
      { name: 'region', clusters: ['dublin'] },
      { name: 'jurisdiction', clusters: ['frankfurt'] },
    ]);
  });

  it('moves local -> same region -> same jurisdiction, then answers 503 at the boundary', async () => {
    await settlesOn('paris');
    await down(pod('paris'));
    await settlesOn('dublin');
    await down(pod('dublin'));
    await settlesOn('frankfurt');
    await down(pod('frankfurt'));
    await settlesOn(503);
    await settlesOn(503, eastWest);
    expect(servedBy.has('virginia')).toBe(false);
    const metrics = (await gw.adminGet('/metrics')).body;
    const value = (series: string) => Number(new RegExp(`^${series} (\\S+)$`, 'm').exec(metrics)?.[1] ?? 0);
    expect(
      value(`clusterset_gateway_cluster_selection_boundary_refusals_total\\{policy="${NS}/eu-only"\\}`),
    ).toBeGreaterThanOrEqual(20);
    for (const tier of ['local', 'region', 'jurisdiction']) {
      expect(
        value(
          `clusterset_gateway_cluster_selection_requests_total\\{policy="${NS}/eu-only",tier="${tier}"\\}`,
        ),
      ).toBeGreaterThan(0);
    }
  }, 60_000);

  it('serves the cluster outside the tiers once the policy says fallback: Any', async () => {
    await gw.writeManifest('shop.yaml', manifests('Any'));
    await settlesOn('virginia');
    await up(pod('frankfurt'));
    await settlesOn('frankfurt');
  }, 30_000);
});
