import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEchoServer } from '../../src/demo/echo/echo-server.ts';
import { freePort, type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { gateway, gatewayClass, httpRoute, service, serviceSlice, yamlDocs } from '../support/manifests.ts';
import { rawExchange } from './raw-client.ts';

const NS = 'edge';

/** The whole program, as `npm start -- --manifests DIR` runs it, against bad files and bad requests. */
describe('a gateway process under hostile input', () => {
  let echo: { port: number; close(): Promise<void> };
  let gw: GatewayProcess;
  let port: number;

  beforeAll(async () => {
    echo = await startEchoServer({
      host: '127.0.0.1',
      port: 0,
      identity: { namespace: NS, service: 'app', pod: 'app-pod', cluster: 'local', zone: 'z1' },
    });
    port = await freePort();
    gw = await startGateway({
      manifests: {
        'base.yaml': yamlDocs(
          gatewayClass(),
          gateway('gw', NS, [{ name: 'http', protocol: 'HTTP', port }]),
          service('app', NS),
          serviceSlice('app-a', 'app', NS, { port: echo.port, pod: 'app-pod' }),
          httpRoute('app', NS, {
            parentRefs: [{ name: 'gw' }],
            rules: [{ backendRefs: [{ name: 'app', port: 80 }] }],
          }),
        ),
        // Present from the start: the process must start anyway.
        'typo.yaml': 'kind: *nope\n',
      },
    });
  });
  afterAll(async () => {
    await gw?.stop();
    await echo?.close();
  });

  const get = () => rawExchange(port, 'GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');

  it('starts with a broken file present, lists it, and serves the good routes', async () => {
    expect((await get()).status).toBe(200);
    const dump = JSON.parse((await gw.adminGet('/config_dump')).body) as { problems: string[] };
    expect(dump.problems).toEqual([
      'typo.yaml:1: Unresolved alias (the anchor must be set before the alias): nope',
    ]);
  });

  it('survives an alias bomb written while it runs, and bad requests, and keeps serving', async () => {
    const lines = ['a: &a [x,x,x,x,x,x,x,x,x]'];
    for (let i = 1; i < 9; i++) {
      const [me, prev] = [String.fromCharCode(97 + i), String.fromCharCode(96 + i)];
      lines.push(`${me}: &${me} [${Array(9).fill(`*${prev}`).join(',')}]`);
    }
    await gw.writeManifest('bomb.yaml', `${lines.join('\n')}\n`);
    let problems: string[] = [];
    for (let i = 0; i < 100 && !problems.some((p) => p.startsWith('bomb.yaml')); i++) {
      await new Promise((r) => setTimeout(r, 100));
      problems = (JSON.parse((await gw.adminGet('/config_dump')).body) as { problems: string[] }).problems;
    }
    expect(problems).toContain(
      'bomb.yaml:1: more than 100 alias expansions (an alias bomb?): the file is refused',
    );
    expect((await rawExchange(port, 'GET / HTTP/2.0\r\nHost: x\r\n\r\n')).status).toBe(505);
    expect((await rawExchange(port, 'GET / HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n')).status).toBe(400);
    expect((await get()).status).toBe(200);
    const metrics = (await gw.adminGet('/metrics')).body;
    expect(metrics).toMatch(
      /clusterset_gateway_rejected_requests_total\{reason="http version not supported"\} 1/,
    );
    expect(metrics).toMatch(/clusterset_gateway_manifest_problems_total\{reason="manifest"\} 2/);
  });
});
