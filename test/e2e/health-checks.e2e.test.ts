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
  service,
  serviceImport,
  serviceSlice,
  yamlDocs,
} from '../support/manifests.ts';

/**
 * Issue 10, "Done when", on loopback with real backends in three zones of two clusters and the gateway's
 * default health check settings: partial failure of the near tier spills exactly the 1.4 rule's share, a
 * restarted endpoint gets its traffic back within 5 s, one client connection spreads over two endpoints, and
 * a backend that drops idle keep-alive connections costs the client nothing. Pass/fail is decided by counts;
 * waits are for conditions only.
 */
const NS = 'shop';
const IMPORT_ID = `ServiceImport/${NS}/web:80`;

interface Pod {
  readonly pod: string;
  readonly cluster: string;
  readonly zone: string;
  readonly service: string;
  port: number;
  server?: { close(): Promise<void> } | undefined;
}

const WEB: Pod[] = [
  { pod: 'near-1', cluster: 'east-1', zone: 'us-east-1a', service: 'web', port: 0 },
  { pod: 'near-2', cluster: 'east-1', zone: 'us-east-1a', service: 'web', port: 0 },
  { pod: 'near-3', cluster: 'east-1', zone: 'us-east-1a', service: 'web', port: 0 },
  { pod: 'zone-b', cluster: 'east-1', zone: 'us-east-1b', service: 'web', port: 0 },
  { pod: 'far', cluster: 'west-1', zone: 'us-west-1a', service: 'web', port: 0 },
];
const PAIR: Pod[] = [
  { pod: 'pair-1', cluster: 'east-1', zone: 'us-east-1a', service: 'pair', port: 0 },
  { pod: 'pair-2', cluster: 'east-1', zone: 'us-east-1a', service: 'pair', port: 0 },
];
const NEAR = ['near-1', 'near-2', 'near-3'];

async function up(pod: Pod): Promise<void> {
  const server = await startEchoServer({
    host: '127.0.0.1',
    port: pod.port,
    identity: { namespace: NS, service: pod.service, pod: pod.pod, cluster: pod.cluster, zone: pod.zone },
  });
  pod.server = server;
  pod.port = server.port;
}

async function down(pod: Pod): Promise<void> {
  await pod.server?.close();
  pod.server = undefined;
}

/**
 * A minimal HTTP/1.1 backend that, like many servers behind a short keep-alive timeout, has closed a
 * connection that sat idle for more than `idleMs` without saying so in advance: the next request on it is
 * met with the connection going away (FIN or RST, alternately) before any response byte.
 */
function startIdleClosingBackend(
  idleMs: number,
): Promise<{ server: Server; port: number; dropped: () => number }> {
  let dropped = 0;
  let connections = 0;
  const server = createServer((socket: Socket) => {
    const rst = connections++ % 2 === 1;
    let lastActive = Date.now();
    let buffered = '';
    socket.on('error', () => {});
    socket.on('data', (chunk) => {
      if (buffered === '' && Date.now() - lastActive > idleMs) {
        dropped++;
        if (rst) socket.resetAndDestroy();
        else socket.destroy();
        return;
      }
      buffered += chunk.toString('latin1');
      let end = buffered.indexOf('\r\n\r\n');
      while (end >= 0) {
        buffered = buffered.slice(end + 4);
        socket.write('HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 5\r\n\r\nstale');
        end = buffered.indexOf('\r\n\r\n');
      }
      lastActive = Date.now();
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      resolve({
        server,
        port: typeof address === 'object' && address ? address.port : 0,
        dropped: () => dropped,
      });
    });
  });
}

interface Answer {
  readonly at: number;
  readonly pod: string;
}

describe('endpoint health: partial failure, recovery, fair picks, stale connections', () => {
  let gw: GatewayProcess;
  let port: number;
  let stale: Awaited<ReturnType<typeof startIdleClosingBackend>>;
  const answers: Answer[] = [];
  const failures: string[] = [];
  let loadRunning = false;
  let load: Promise<unknown> | undefined;
  const agent = new Agent({ keepAliveTimeout: 30_000, connections: 4 });

  beforeAll(async () => {
    for (const pod of [...WEB, ...PAIR]) await up(pod);
    stale = await startIdleClosingBackend(40);
    port = await freePort();
    const sliceOf = (pod: Pod) =>
      importedSlice(`web-${pod.pod}`, 'web', NS, pod.cluster, {
        port: pod.port,
        zone: pod.zone,
        pod: pod.pod,
      });
    gw = await startGateway({
      args: ['--cluster', 'east-1', '--zone', 'us-east-1a', '--region', 'us-east'],
      manifests: {
        'health.yaml': yamlDocs(
          gatewayClass(),
          gateway('edge', NS, [{ name: 'http', protocol: 'HTTP', port }]),
          serviceImport('web', NS, 'PreferSameZone'),
          service('pair', NS),
          service('stale', NS),
          ...PAIR.map((pod) =>
            serviceSlice(`pair-${pod.pod}`, 'pair', NS, { port: pod.port, zone: pod.zone, pod: pod.pod }),
          ),
          serviceSlice('stale-1', 'stale', NS, { port: stale.port, zone: 'us-east-1a', pod: 'stale-1' }),
          httpRoute('routes', NS, {
            parentRefs: [{ name: 'edge' }],
            rules: [
              {
                matches: [{ path: { type: 'PathPrefix', value: '/pair' } }],
                backendRefs: [{ name: 'pair', port: 80 }],
              },
              {
                matches: [{ path: { type: 'PathPrefix', value: '/stale' } }],
                backendRefs: [{ name: 'stale', port: 80 }],
              },
              {
                backendRefs: [
                  { group: 'multicluster.x-k8s.io', kind: 'ServiceImport', name: 'web', port: 80 },
                ],
              },
            ],
          }),
          ...WEB.map(sliceOf),
        ),
      },
    });
  });

  afterAll(async () => {
    loadRunning = false;
    await load;
    await gw?.stop();
    await agent.close();
    await Promise.all([...WEB, ...PAIR].map(down));
    await new Promise((resolve) => stale?.server.close(resolve));
  });

  /** Four keep-alive clients sending to the ServiceImport without pause, recording who answered. */
  function startLoad(): void {
    loadRunning = true;
    const client = async () => {
      while (loadRunning) {
        try {
          const response = await request(`http://127.0.0.1:${port}/`, { dispatcher: agent });
          const body = await response.body.text();
          if (response.statusCode !== 200) failures.push(`${response.statusCode} ${body.trim()}`);
          else answers.push({ at: Date.now(), pod: (JSON.parse(body) as { pod: string }).pod });
        } catch (error) {
          failures.push(String(error));
        }
      }
    };
    load = Promise.all([client(), client(), client(), client()]);
  }

  async function waitFor(check: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!check()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  async function endpointHealth(pod: Pod): Promise<string | undefined> {
    const dump = JSON.parse((await gw.adminGet('/config_dump')).body) as {
      balancers: Record<string, { endpoints: { key: string; health?: string }[] }>;
    };
    return dump.balancers[IMPORT_ID]?.endpoints.find((e) => e.key === `127.0.0.1:${pod.port}`)?.health;
  }

  const nearShare = (slice: readonly Answer[]) =>
    slice.filter((a) => NEAR.includes(a.pod)).length / Math.max(1, slice.length);

  it('with every near endpoint healthy, the gateway zone takes all traffic', async () => {
    startLoad();
    await waitFor(() => answers.length >= 300, '300 answers');
    expect(failures).toEqual([]);
    expect(nearShare(answers)).toBe(1);
  });

  it('one of three near endpoints stopped: the near share settles at 2/3 × 1.4 = 93.3%, no client error', async () => {
    const near3 = WEB[2]!;
    await down(near3);
    await eventually(async () => {
      const health = await endpointHealth(near3);
      if (health === 'healthy') throw new Error(`near-3 still ${health}`);
    }, 15_000);
    const from = answers.length;
    await waitFor(() => answers.length >= from + 1_500, '1,500 answers after the stop was seen');
    const settled = answers.slice(from, from + 1_500);
    expect(settled.some((a) => a.pod === 'near-3')).toBe(false);
    const share = nearShare(settled);
    expect(share).toBeGreaterThanOrEqual(0.933 - 0.03);
    expect(share).toBeLessThanOrEqual(0.933 + 0.03);
    expect(failures).toEqual([]);
  });

  it('started again: above 97% near within 5 s, no client error', async () => {
    const near3 = WEB[2]!;
    await up(near3);
    const restartedAt = Date.now();
    const sinceFiveSeconds = () => answers.filter((a) => a.at >= restartedAt + 5_000);
    await waitFor(() => sinceFiveSeconds().length >= 500, '500 answers from 5 s after the restart on');
    const window = sinceFiveSeconds().slice(0, 500);
    expect(nearShare(window)).toBeGreaterThan(0.97);
    expect(window.some((a) => a.pod === 'near-3')).toBe(true);
    expect(failures).toEqual([]);
    loadRunning = false;
    await load;
  });

  it('one client connection, two equal endpoints: each gets 50% ± 10% of 200 requests', async () => {
    const single = new Agent({ connections: 1, keepAliveTimeout: 30_000 });
    const counts = new Map<string, number>();
    try {
      for (let i = 0; i < 200; i++) {
        const response = await request(`http://127.0.0.1:${port}/pair`, { dispatcher: single });
        const body = (await response.body.json()) as { pod: string };
        expect(response.statusCode).toBe(200);
        counts.set(body.pod, (counts.get(body.pod) ?? 0) + 1);
      }
    } finally {
      await single.close();
    }
    expect(counts.get('pair-1') ?? 0).toBeGreaterThanOrEqual(80);
    expect(counts.get('pair-1') ?? 0).toBeLessThanOrEqual(120);
    expect((counts.get('pair-1') ?? 0) + (counts.get('pair-2') ?? 0)).toBe(200);
  });

  it('an endpoint that drops idle keep-alive connections: 0 client errors over 1,000 GETs with idle gaps', async () => {
    const single = new Agent({ connections: 1, keepAliveTimeout: 30_000 });
    const errors: string[] = [];
    const droppedBefore = stale.dropped();
    try {
      for (let i = 0; i < 1_000; i++) {
        // Every tenth request follows a pause longer than the backend's idle limit.
        if (i % 10 === 9) await new Promise((resolve) => setTimeout(resolve, 60));
        try {
          const response = await request(`http://127.0.0.1:${port}/stale`, { dispatcher: single });
          const body = await response.body.text();
          if (response.statusCode !== 200 || body !== 'stale') errors.push(`${response.statusCode} ${body}`);
        } catch (error) {
          errors.push(String(error));
        }
      }
    } finally {
      await single.close();
    }
    expect(errors).toEqual([]);
    // The stale connections really happened, and each was retried on a fresh one.
    const dropped = stale.dropped() - droppedBefore;
    expect(dropped).toBeGreaterThanOrEqual(50);
    const metrics = (await gw.adminGet('/metrics')).body;
    const retried = Number(
      /clusterset_gateway_upstream_connection_retries_total\{reason="reset-before-response"\} (\d+)/.exec(
        metrics,
      )?.[1] ?? 0,
    );
    expect(retried).toBeGreaterThanOrEqual(dropped);
  });
});
