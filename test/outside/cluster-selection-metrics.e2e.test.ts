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
 * A ClusterSelectionPolicy's metric series (requests per tier, boundary refusals) leave /metrics when the policy
 * is deleted, as a deleted backend's series do: a fleet whose policies come and go keeps a bounded /metrics.
 */
const NS = 'shop';
const PICKS = 'clusterset_gateway_cluster_selection_requests_total';
const REFUSALS = 'clusterset_gateway_cluster_selection_boundary_refusals_total';

interface Pod extends RestartablePod {
  readonly cluster: string;
}
const PARIS: Pod = { cluster: 'paris', port: 0 };
const VIRGINIA: Pod = { cluster: 'virginia', port: 0 };
const up = (p: Pod) =>
  startPod(p, { namespace: NS, service: 'shop', pod: `shop-${p.cluster}`, cluster: p.cluster, zone: 'z' });

const policy = {
  apiVersion: 'policy.clusterset-gateway.io/v1alpha1',
  kind: 'ClusterSelectionPolicy',
  metadata: { name: 'paris-only', namespace: NS },
  spec: {
    targetRefs: [{ group: 'multicluster.x-k8s.io', kind: 'ServiceImport', name: 'shop' }],
    tiers: [{ name: 'local', sameCluster: true }],
    fallback: 'None',
  },
};

describe('ClusterSelectionPolicy metrics follow the policy', () => {
  let gw: GatewayProcess;
  let port: number;
  const agent = new Agent({ keepAliveTimeout: 30_000, connections: 2 });
  const manifests = (withPolicy: boolean) =>
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
      ...[PARIS, VIRGINIA].map((p) =>
        importedSlice(`shop-${p.cluster}`, 'shop', NS, p.cluster, { port: p.port }),
      ),
      ...(withPolicy ? [policy] : []),
    );
  const get = async (): Promise<{ status: number; cluster?: string }> => {
    const response = await request(`http://127.0.0.1:${port}/`, { dispatcher: agent });
    const text = await response.body.text();
    if (response.statusCode !== 200) return { status: response.statusCode };
    return { status: 200, cluster: (JSON.parse(text) as { cluster: string }).cluster };
  };
  const metrics = async () => (await gw.adminGet('/metrics')).body;
  const series = (text: string, name: string) =>
    text
      .split('\n')
      .filter((line) => line.startsWith(`${name}{`) && line.includes('policy="shop/paris-only"'));

  beforeAll(async () => {
    await up(PARIS);
    await up(VIRGINIA);
    port = await freePort();
    gw = await startGateway({
      args: ['--cluster', 'paris', '--health-check-interval-ms', '200', '--health-check-timeout-ms', '100'],
      manifests: { 'shop.yaml': manifests(true) },
    });
  }, 60_000);

  afterAll(async () => {
    await gw?.stop();
    await agent.close();
    await stopPod(PARIS);
    await stopPod(VIRGINIA);
  });

  it('counts picks per tier and refusals at the boundary, then drops both series with the policy', async () => {
    await eventually(async () => expect(await get()).toEqual({ status: 200, cluster: 'paris' }), 10_000);
    expect(series(await metrics(), PICKS)).toEqual([expect.stringMatching(/tier="local"} [1-9]/)]);

    // Paris down: the boundary holds (503, never virginia) and each refusal is counted.
    await stopPod(PARIS);
    await eventually(async () => expect((await get()).status).toBe(503), 10_000);
    expect(series(await metrics(), REFUSALS)).toEqual([expect.stringMatching(/} [1-9]/)]);

    // The policy deleted: virginia serves, and neither series is left behind.
    await gw.writeManifest('shop.yaml', manifests(false));
    await eventually(async () => expect(await get()).toEqual({ status: 200, cluster: 'virginia' }), 10_000);
    const after = await metrics();
    expect(series(after, PICKS)).toEqual([]);
    expect(series(after, REFUSALS)).toEqual([]);
    expect(after).toContain(`# TYPE ${PICKS} counter`);
  });
});
