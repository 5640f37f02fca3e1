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
 * Issue 3, "Done when": three simulated clusters of real echo backends; under steady load the near backends
 * are killed, no client request fails and traffic moves to the next tier; they come back and traffic returns.
 */
const NS = 'shop';

interface Pod extends RestartablePod {
  readonly pod: string;
  readonly cluster: string;
  readonly zone: string;
}

const PODS: Pod[] = [
  { pod: 'near-1', cluster: 'east-1', zone: 'us-east-1a', port: 0 },
  { pod: 'near-2', cluster: 'east-1', zone: 'us-east-1a', port: 0 },
  { pod: 'same-cluster', cluster: 'east-1', zone: 'us-east-1b', port: 0 },
  { pod: 'same-region', cluster: 'east-2', zone: 'us-east-1c', port: 0 },
  { pod: 'far', cluster: 'west-1', zone: 'us-west-1a', port: 0 },
];

const up = (p: Pod) =>
  startPod(p, { namespace: NS, service: 'web', pod: p.pod, cluster: p.cluster, zone: p.zone });
const down = stopPod;

describe('multicluster: locality tiers and failover under load', () => {
  let gw: GatewayProcess;
  let port: number;
  const agent = new Agent({ keepAliveTimeout: 30_000, connections: 4 });

  beforeAll(async () => {
    for (const pod of PODS) await up(pod);
    port = await freePort();
    const regionOf = (cluster: string) => (cluster === 'west-1' ? 'us-west' : 'us-east');
    gw = await startGateway({
      args: [
        '--cluster',
        'east-1',
        '--zone',
        'us-east-1a',
        '--region',
        'us-east',
        '--outlier-base-ejection-ms',
        '300',
      ],
      manifests: {
        'mc.yaml': yamlDocs(
          gatewayClass(),
          gateway('edge', NS, [{ name: 'http', protocol: 'HTTP', port }]),
          serviceImport('web', NS, 'PreferSameZone'),
          httpRoute('web', NS, {
            parentRefs: [{ name: 'edge' }],
            rules: [
              {
                backendRefs: [
                  { group: 'multicluster.x-k8s.io', kind: 'ServiceImport', name: 'web', port: 80 },
                ],
              },
            ],
          }),
          ...PODS.map((pod) => {
            const slice = importedSlice(`web-${pod.pod}`, 'web', NS, pod.cluster, {
              port: pod.port,
              zone: pod.zone,
              pod: pod.pod,
            }) as {
              metadata: { labels: Record<string, string> };
            };
            slice.metadata.labels['topology.kubernetes.io/region'] = regionOf(pod.cluster);
            return slice;
          }),
        ),
      },
    });
  });

  afterAll(async () => {
    await gw?.stop();
    await agent.close();
    await Promise.all(PODS.map(down));
  });

  /**
   * Runs `action` under steady load from 4 keep-alive clients, then keeps the load on until `minResponses` more
   * answers arrived after it (so the assertions never depend on how fast a busy machine is). Records who answered
   * and every failure.
   */
  async function underLoad(
    action: () => Promise<void>,
    minResponses = 150,
  ): Promise<{ pods: string[]; failures: string[] }> {
    const pods: string[] = [];
    const failures: string[] = [];
    let running = true;
    const client = async () => {
      while (running) {
        try {
          const response = await request(`http://127.0.0.1:${port}/`, { dispatcher: agent });
          const body = await response.body.text();
          if (response.statusCode !== 200) failures.push(`${response.statusCode} ${body.trim()}`);
          else pods.push((JSON.parse(body) as { pod: string }).pod);
        } catch (error) {
          failures.push(String(error));
        }
      }
    };
    const clients = Promise.all([client(), client(), client(), client()]);
    await action();
    const target = pods.length + failures.length + minResponses;
    const deadline = Date.now() + 20_000;
    while (pods.length + failures.length < target && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    running = false;
    await clients;
    return { pods, failures };
  }

  const share = (pods: readonly string[], names: readonly string[]) =>
    pods.filter((pod) => names.includes(pod)).length / Math.max(1, pods.length);

  it('sends everything to the gateway zone while it is healthy', async () => {
    const { pods, failures } = await underLoad(async () => {});
    expect(failures).toEqual([]);
    expect(share(pods, ['near-1', 'near-2'])).toBe(1);
  });

  it('moves to the same cluster, then the same region, without a failed request', async () => {
    const nearGone = await underLoad(() => Promise.all(PODS.slice(0, 2).map(down)).then(() => {}));
    expect(nearGone.failures).toEqual([]);
    const settled = nearGone.pods.slice(-50);
    expect(share(settled, ['same-cluster'])).toBe(1);

    const clusterGone = await underLoad(() => down(PODS[2]!));
    expect(clusterGone.failures).toEqual([]);
    expect(share(clusterGone.pods.slice(-50), ['same-region'])).toBe(1);
  });

  it('returns to the near pods when they come back', async () => {
    // The restarted pods are served again once the gateway stops avoiding them: a tier whose every endpoint
    // refused counts as down until a probe passes or the avoidance ends (5 s). Wait for the gateway to say
    // so, then keep the load on.
    const back = await underLoad(async () => {
      for (const pod of PODS.slice(0, 3)) await up(pod);
      await eventually(async () => {
        const dump = JSON.parse((await gw.adminGet('/config_dump')).body) as {
          balancers: Record<string, { endpoints: { key: string; health?: string; avoided?: boolean }[] }>;
        };
        const endpoints = dump.balancers[`ServiceImport/${NS}/web:80`]?.endpoints ?? [];
        for (const pod of PODS.slice(0, 2)) {
          const endpoint = endpoints.find((e) => e.key === `127.0.0.1:${pod.port}`);
          if (endpoint?.health !== 'healthy') throw new Error(`${pod.pod} is ${endpoint?.health}`);
          if (endpoint.avoided === true) throw new Error(`${pod.pod} is still avoided`);
        }
      }, 15_000);
    });
    expect(back.failures).toEqual([]);
    expect(share(back.pods.slice(-50), ['near-1', 'near-2'])).toBe(1);
  });
});
