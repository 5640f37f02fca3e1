import { createServer, type Server } from 'node:http';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEchoServer } from '../../src/demo/echo/echo-server.ts';
import { eventually, freePort, type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { gateway, gatewayClass, httpRoute, service, serviceSlice, yamlDocs } from '../support/manifests.ts';

const NS = 'multi';

/** `--workers 2`: one controller process, two data plane workers sharing the listening sockets. */
describe('worker mode', () => {
  const echoes: { port: number; close(): Promise<void> }[] = [];
  let gw: GatewayProcess;
  let port: number;

  const route = (backend: string) =>
    yamlDocs(
      httpRoute('r', NS, {
        parentRefs: [{ name: 'gw' }],
        rules: [{ backendRefs: [{ name: backend, port: 80 }] }],
      }),
    );

  beforeAll(async () => {
    for (const name of ['one', 'two', 'sticky-a', 'sticky-b']) {
      echoes.push(
        await startEchoServer({
          host: '127.0.0.1',
          port: 0,
          identity: { namespace: NS, service: name, pod: `${name}-pod`, cluster: 'local', zone: 'z' },
        }),
      );
    }
    port = await freePort();
    gw = await startGateway({
      args: ['--workers', '2'],
      manifests: {
        'base.yaml': yamlDocs(
          gatewayClass(),
          gateway('gw', NS, [{ name: 'http', protocol: 'HTTP', port }]),
          service('one', NS),
          service('two', NS),
          service('sticky', NS),
          serviceSlice('one', 'one', NS, { port: echoes[0]!.port }),
          serviceSlice('two', 'two', NS, { port: echoes[1]!.port }),
          serviceSlice('sticky-a', 'sticky', NS, { port: echoes[2]!.port }),
          serviceSlice('sticky-b', 'sticky', NS, { port: echoes[3]!.port }),
          httpRoute('sticky', NS, {
            parentRefs: [{ name: 'gw' }],
            rules: [
              {
                matches: [{ path: { type: 'PathPrefix', value: '/sticky' } }],
                backendRefs: [{ name: 'sticky', port: 80 }],
                sessionPersistence: { sessionName: 'sticky' },
              },
            ],
          }),
        ),
        'route.yaml': route('one'),
      },
    });
  });

  afterAll(async () => {
    await gw?.stop();
    await Promise.all(echoes.map((echo) => echo.close()));
  });

  /** A new connection per request, so the kernel spreads them over both workers. */
  const podsOf = async (count: number): Promise<string[]> => {
    const pods: string[] = [];
    for (let i = 0; i < count; i++) {
      const response = await request(`http://127.0.0.1:${port}/`, { reset: true });
      pods.push(((await response.body.json()) as { pod: string }).pod);
    }
    return pods;
  };

  it('serves from every worker and follows a change in all of them', async () => {
    expect(new Set(await podsOf(20))).toEqual(new Set(['one-pod']));
    await gw.writeManifest('route.yaml', route('two'));
    await eventually(async () => expect(new Set(await podsOf(20))).toEqual(new Set(['two-pod'])), 3000);
  });

  it('keeps a session on its pod whichever worker a connection lands on (one generated key for all)', async () => {
    const first = await request(`http://127.0.0.1:${port}/sticky`, { reset: true });
    const pinned = ((await first.body.json()) as { pod: string }).pod;
    const setCookie = String(first.headers['set-cookie'] ?? '');
    expect(setCookie).toMatch(/^sticky=/);
    const cookie = setCookie.split(';')[0]!;
    const pods: string[] = [];
    let cookiesSet = 0;
    for (let i = 0; i < 40; i++) {
      const response = await request(`http://127.0.0.1:${port}/sticky`, { reset: true, headers: { cookie } });
      if (response.headers['set-cookie'] !== undefined) cookiesSet++;
      pods.push(((await response.body.json()) as { pod: string }).pod);
    }
    // A worker that could not open the value would pick afresh and set a new cookie.
    expect(cookiesSet).toBe(0);
    expect(new Set(pods)).toEqual(new Set([pinned]));
  });

  it('adds up every worker in /metrics and keeps the controller metrics', async () => {
    const before = requestsCount((await gw.adminGet('/metrics')).body);
    await podsOf(10);
    const metrics = (await gw.adminGet('/metrics')).body;
    expect(requestsCount(metrics) - before).toBe(10);
    expect(metrics).toMatch(/clusterset_gateway_translations_total\{result="ok"\} \d+/);
  });
});

/** An HTTP backend that names itself and counts the probes of /healthz; `sick` fails them with 503. */
async function probedBackend(pod: string, sick: boolean) {
  const probes: number[] = [];
  const server: Server = createServer((req, res) => {
    if (req.url === '/healthz') {
      probes.push(Date.now());
      res.writeHead(sick ? 503 : 200).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ pod }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : 0,
    probes,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * `--workers 2` with active health checks (issue 29): one worker probes, every worker gets the verdicts. An
 * endpoint failing its HTTP probe gets no request from any worker, and each endpoint sees one probe per
 * interval, not one per worker.
 */
describe('worker mode: health checks run once and are shared', () => {
  const NS2 = 'probed';
  let good: Awaited<ReturnType<typeof probedBackend>>;
  let sick: Awaited<ReturnType<typeof probedBackend>>;
  let gw: GatewayProcess;
  let port: number;

  beforeAll(async () => {
    good = await probedBackend('good', false);
    sick = await probedBackend('sick', true);
    port = await freePort();
    gw = await startGateway({
      args: ['--workers', '2', '--health-check-interval-ms', '1000', '--health-check-jitter', '0'],
      manifests: {
        'probed.yaml': yamlDocs(
          gatewayClass(),
          gateway('gw', NS2, [{ name: 'http', protocol: 'HTTP', port }]),
          {
            apiVersion: 'v1',
            kind: 'Service',
            metadata: {
              name: 'web',
              namespace: NS2,
              annotations: {
                'clusterset-gateway.io/health-check': 'http',
                'clusterset-gateway.io/health-check-path': '/healthz',
              },
            },
            spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 8080 }] },
          },
          serviceSlice('web-good', 'web', NS2, { port: good.port, pod: 'good' }),
          serviceSlice('web-sick', 'web', NS2, { port: sick.port, pod: 'sick' }),
          httpRoute('r', NS2, {
            parentRefs: [{ name: 'gw' }],
            rules: [{ backendRefs: [{ name: 'web', port: 80 }] }],
          }),
        ),
      },
    });
  });

  afterAll(async () => {
    await gw?.stop();
    await good?.close();
    await sick?.close();
  });

  it('an endpoint failing its probes gets no request from any worker; /config_dump shows the balancers', async () => {
    await eventually(async () => {
      const dump = JSON.parse((await gw.adminGet('/config_dump')).body) as {
        balancers: Record<string, { endpoints: { key: string; health?: string }[] }>;
      };
      const endpoints = dump.balancers[`Service/${NS2}/web:80`]?.endpoints ?? [];
      expect(endpoints.map((e) => [e.key, e.health]).sort()).toEqual(
        [
          [`127.0.0.1:${good.port}`, 'healthy'],
          [`127.0.0.1:${sick.port}`, 'unhealthy'],
        ].sort(),
      );
    }, 15_000);
    // The other worker has the verdict one shared result later (its first ones may precede its table).
    await eventually(async () => {
      const pods: string[] = [];
      for (let i = 0; i < 40; i++) {
        // A new connection per request, so the kernel spreads them over both workers.
        const response = await request(`http://127.0.0.1:${port}/`, { reset: true });
        pods.push(((await response.body.json()) as { pod: string }).pod);
      }
      expect(new Set(pods)).toEqual(new Set(['good']));
    }, 10_000);
  });

  it('each endpoint is probed once per interval, not once per worker', async () => {
    const from = Date.now();
    const count = (probes: readonly number[]) => probes.filter((at) => at >= from).length;
    await new Promise((resolve) => setTimeout(resolve, 6_000));
    // 6 s at 1 s: 6 probes (±1 for where the window cuts); two probing workers would make 12.
    for (const backend of [good, sick]) {
      expect(count(backend.probes)).toBeGreaterThanOrEqual(5);
      expect(count(backend.probes)).toBeLessThanOrEqual(7);
    }
  });
});

function requestsCount(metrics: string): number {
  let total = 0;
  for (const match of metrics.matchAll(
    /^clusterset_gateway_requests_total\{[^}]*route="multi\/r"[^}]*\} (\d+)/gm,
  )) {
    total += Number(match[1]);
  }
  return total;
}
