import { createServer, type Server, type Socket } from 'node:net';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEchoServer } from '../../src/demo/echo/echo-server.ts';
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
 * Issue 42, "Done when": six clusters of two pods each in three locality tiers (the gateway's zone, its region,
 * the rest of the clusterset). Under steady load the two nearest tiers fail in one instant while the third stays
 * healthy. Retries must move on to the healthy tier (never back to an endpoint or a tier that already failed this
 * request): at most 1 % of the requests of the first second fail, and none once health has converged (2 s after).
 * Twice: the pods die (connections refused), and the pods keep accepting connections but reset every request (a
 * TCP health check still passes on them, so only passive signals and retries can carry it).
 */
const NS = 'shop';
const IMPORT_ID = `ServiceImport/${NS}/web:80`;

interface Pod {
  readonly pod: string;
  readonly cluster: string;
  readonly zone: string;
  readonly region: string;
  port: number;
  server?: { close(): Promise<void> } | undefined;
}

const CLUSTERS = [
  { cluster: 'c1', zone: 'us-east-1a', region: 'us-east' },
  { cluster: 'c2', zone: 'us-east-1a', region: 'us-east' },
  { cluster: 'c3', zone: 'us-east-1b', region: 'us-east' },
  { cluster: 'c4', zone: 'us-east-1c', region: 'us-east' },
  { cluster: 'c5', zone: 'us-west-1a', region: 'us-west' },
  { cluster: 'c6', zone: 'us-west-1b', region: 'us-west' },
];
const PODS: Pod[] = CLUSTERS.flatMap((c) => [1, 2].map((i) => ({ ...c, pod: `${c.cluster}-${i}`, port: 0 })));
const FAILING = PODS.filter((p) => p.region === 'us-east');
const FAR = PODS.filter((p) => p.region === 'us-west').map((p) => p.pod);

async function up(pod: Pod): Promise<void> {
  const server = await startEchoServer({
    host: '127.0.0.1',
    port: pod.port,
    identity: { namespace: NS, service: 'web', pod: pod.pod, cluster: pod.cluster, zone: pod.zone },
  });
  pod.server = server;
  pod.port = server.port;
}

async function down(pod: Pod): Promise<void> {
  await pod.server?.close();
  pod.server = undefined;
}

/** In the pod's place on its port: a server that accepts every connection and resets it at the first byte. */
async function resetting(pod: Pod): Promise<void> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    socket.once('data', () => socket.resetAndDestroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(pod.port, '127.0.0.1', resolve);
  });
  pod.server = {
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

interface Answer {
  readonly atMs: number;
  readonly ok: boolean;
  readonly detail: string;
}

describe('retries move on when two locality tiers fail at once', () => {
  let gw: GatewayProcess;
  let port: number;
  const agent = new Agent({ keepAliveTimeout: 30_000, connections: 4 });

  beforeAll(async () => {
    for (const pod of PODS) await up(pod);
    port = await freePort();
    gw = await startGateway({
      args: ['--cluster', 'hub', '--zone', 'us-east-1a', '--region', 'us-east'],
      manifests: {
        'web.yaml': yamlDocs(
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
            }) as { metadata: { labels: Record<string, string> } };
            slice.metadata.labels['topology.kubernetes.io/region'] = pod.region;
            return slice;
          }),
        ),
      },
    });
  }, 30_000);

  afterAll(async () => {
    await gw?.stop();
    await agent.close();
    await Promise.all(PODS.map(down));
  });

  async function allHealthy(): Promise<void> {
    await eventually(async () => {
      const dump = JSON.parse((await gw.adminGet('/config_dump')).body) as {
        balancers: Record<string, { endpoints: { key: string; health?: string; avoided?: boolean }[] }>;
      };
      const endpoints = dump.balancers[IMPORT_ID]?.endpoints ?? [];
      const sick = endpoints.filter((e) => e.health !== 'healthy' || e.avoided === true);
      if (endpoints.length !== PODS.length || sick.length > 0)
        throw new Error(`not all healthy: ${JSON.stringify(sick)}`);
    }, 20_000);
  }

  /**
   * Four keep-alive clients send requests back to back; `fail` runs once the load is steady, and the load stays on
   * until 4 s after it and at least 300 answers after its 2-second mark. Answers carry their time since `fail`.
   */
  /** Retries to the backend so far, by the gateway's own count (/metrics). */
  async function retriesSoFar(): Promise<number> {
    const text = (await gw.adminGet('/metrics')).body;
    let sum = 0;
    for (const line of text.split('\n')) {
      if (
        line.startsWith('clusterset_gateway_upstream_retries_total{') &&
        line.includes(`backend="${IMPORT_ID}"`)
      )
        sum += Number(line.slice(line.lastIndexOf(' ') + 1));
    }
    return sum;
  }

  async function failUnderLoad(
    fail: () => Promise<void>,
  ): Promise<{ answers: Answer[]; pods: string[]; lateRetries: number }> {
    const answers: Answer[] = [];
    const pods: string[] = [];
    let failedAt = Number.POSITIVE_INFINITY;
    let running = true;
    const client = async () => {
      while (running) {
        let ok = false;
        let detail = '';
        try {
          const response = await request(`http://127.0.0.1:${port}/`, { dispatcher: agent });
          const body = await response.body.text();
          ok = response.statusCode === 200;
          detail = ok ? (JSON.parse(body) as { pod: string }).pod : `${response.statusCode} ${body.trim()}`;
        } catch (error) {
          detail = String(error);
        }
        const atMs = performance.now() - failedAt;
        answers.push({ atMs, ok, detail });
        if (ok && atMs >= 2000) pods.push(detail);
      }
    };
    const clients = Promise.all([client(), client(), client(), client()]);
    await eventually(async () => {
      if (answers.length < 100) throw new Error('load not steady yet');
    }, 10_000);
    failedAt = performance.now();
    await fail();
    await eventually(async () => {
      if (performance.now() - failedAt < 2000) throw new Error('before the 2-second mark');
    }, 10_000);
    const retriesAtMark = await retriesSoFar();
    const answersAtMark = answers.length;
    await eventually(async () => {
      const late = answers.filter((a) => a.atMs >= 2000).length;
      if (performance.now() - failedAt < 4000 || late < 300) throw new Error(`${late} answers after 2 s`);
    }, 30_000);
    running = false;
    await clients;
    const lateRetries = (await retriesSoFar()) - retriesAtMark;
    // Once the failing tiers are known, requests go to the healthy tier first: retries are the exception.
    expect(lateRetries).toBeLessThanOrEqual(Math.ceil((answers.length - answersAtMark) / 20));
    return { answers: answers.filter((a) => a.atMs >= 0), pods, lateRetries };
  }

  function expectCarried(answers: readonly Answer[], pods: readonly string[]): void {
    const firstSecond = answers.filter((a) => a.atMs < 1000);
    const firstFailures = firstSecond.filter((a) => !a.ok);
    const converged = answers.filter((a) => a.atMs >= 2000);
    expect(firstSecond.length).toBeGreaterThan(0);
    expect(
      firstFailures.length,
      `${firstFailures.length} of ${firstSecond.length} failed in the first second: ${firstFailures
        .slice(0, 5)
        .map((a) => a.detail)
        .join('; ')}`,
    ).toBeLessThanOrEqual(Math.floor(firstSecond.length / 100));
    expect(converged.filter((a) => !a.ok).map((a) => `${Math.round(a.atMs)} ms: ${a.detail}`)).toEqual([]);
    expect(pods.length).toBeGreaterThan(0);
    expect(pods.every((pod) => FAR.includes(pod))).toBe(true);
  }

  it('pods that die: connections refused', async () => {
    await allHealthy();
    try {
      const { answers, pods } = await failUnderLoad(async () => {
        await Promise.all(FAILING.map(down));
      });
      expectCarried(answers, pods);
    } finally {
      for (const pod of FAILING) await up(pod);
    }
  }, 60_000);

  it('pods that accept connections and reset every request', async () => {
    await allHealthy();
    const { answers, pods } = await failUnderLoad(async () => {
      await Promise.all(FAILING.map(down));
      await Promise.all(FAILING.map(resetting));
    });
    expectCarried(answers, pods);
  }, 60_000);
});
