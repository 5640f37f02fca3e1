import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEchoServer } from '../../src/echo/echo-server.ts';
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
    for (const name of ['one', 'two']) {
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
          serviceSlice('one', 'one', NS, { port: echoes[0]!.port }),
          serviceSlice('two', 'two', NS, { port: echoes[1]!.port }),
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

  it('adds up every worker in /metrics and keeps the controller metrics', async () => {
    const before = requestsCount((await gw.adminGet('/metrics')).body);
    await podsOf(10);
    const metrics = (await gw.adminGet('/metrics')).body;
    expect(requestsCount(metrics) - before).toBe(10);
    expect(metrics).toMatch(/clusterset_gateway_translations_total\{result="ok"\} \d+/);
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
