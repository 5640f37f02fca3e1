import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEchoServer } from '../../src/demo/echo/echo-server.ts';
import { eventually, freePort, type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { gateway, gatewayClass, httpRoute, service, serviceSlice, yamlDocs } from '../support/manifests.ts';

interface Echo {
  readonly pod: string;
  readonly path: string;
  readonly host: string;
  readonly headers: Record<string, string[]>;
}

const NS = 'shop';

describe('north-south: a folder of manifests served end to end', () => {
  const echoes: { port: number; close(): Promise<void> }[] = [];
  let gw: GatewayProcess;
  let port: number;
  const agent = new Agent({ keepAliveTimeout: 30_000, connections: 1 });

  const routes = (v1Path: string, v2Path: string) =>
    yamlDocs(
      httpRoute('store', NS, {
        parentRefs: [{ name: 'edge' }],
        hostnames: ['shop.example.com'],
        rules: [
          {
            matches: [{ path: { type: 'PathPrefix', value: v1Path } }],
            backendRefs: [{ name: 'v1', port: 80 }],
          },
          {
            matches: [{ path: { type: 'PathPrefix', value: v2Path } }],
            backendRefs: [{ name: 'v2', port: 80 }],
          },
        ],
      }),
    );

  beforeAll(async () => {
    for (const pod of ['v1-pod', 'v2-pod']) {
      echoes.push(
        await startEchoServer({
          host: '127.0.0.1',
          port: 0,
          identity: { namespace: NS, service: pod.slice(0, 2), pod, cluster: 'local', zone: 'z1' },
        }),
      );
    }
    port = await freePort();
    gw = await startGateway({
      manifests: {
        'base.yaml': yamlDocs(
          gatewayClass(),
          gateway('edge', NS, [{ name: 'http', protocol: 'HTTP', port }]),
          service('v1', NS),
          service('v2', NS),
          serviceSlice('v1-a', 'v1', NS, { port: echoes[0]!.port, pod: 'v1-pod' }),
          serviceSlice('v2-a', 'v2', NS, { port: echoes[1]!.port, pod: 'v2-pod' }),
        ),
        'routes.yaml': routes('/a', '/b'),
      },
    });
  });

  afterAll(async () => {
    await gw?.stop();
    await agent.close();
    await Promise.all(echoes.map((echo) => echo.close()));
  });

  async function get(
    path: string,
    host = 'shop.example.com',
  ): Promise<{ status: number; body: string; type: string }> {
    const response = await request(`http://127.0.0.1:${port}${path}`, {
      headers: { host },
      dispatcher: agent,
    });
    return {
      status: response.statusCode,
      body: await response.body.text(),
      type: String(response.headers['content-type']),
    };
  }

  it('routes by host and path prefix to the right backend, preserving Host and the raw path', async () => {
    const response = await get('/a/x%2Fy?q=1&q=2');
    expect(response.status).toBe(200);
    const echo = JSON.parse(response.body) as Echo;
    expect(echo.pod).toBe('v1-pod');
    expect(echo.path).toBe('/a/x%2Fy?q=1&q=2');
    expect(echo.host).toBe('shop.example.com');
    expect(JSON.parse((await get('/b')).body)).toMatchObject({ pod: 'v2-pod' });
  });

  it('answers 404 in plain text when no route matches', async () => {
    const wrongHost = await get('/a', 'other.example.com');
    expect(wrongHost.status).toBe(404);
    expect(wrongHost.type).not.toContain('json');
    expect((await get('/abc')).status).toBe(404);
  });

  it('follows an edit of the manifests within a second, on the same keep-alive connection', async () => {
    await gw.writeManifest('routes.yaml', routes('/b', '/a'));
    await eventually(async () => {
      expect(JSON.parse((await get('/a')).body)).toMatchObject({ pod: 'v2-pod' });
    }, 1000);
    expect(JSON.parse((await get('/b')).body)).toMatchObject({ pod: 'v1-pod' });
  });

  it('keeps serving the last good configuration when a file is malformed, and says where', async () => {
    // A syntax error makes the whole file unreadable (a repeated key, by contrast, costs only its object).
    await gw.writeManifest(
      'routes.yaml',
      `${routes('/b', '/a')}---\nkind: HTTPRoute\nmetadata: {name: [oops\n`,
    );
    await eventually(async () => {
      const dump = JSON.parse((await gw.adminGet('/config_dump')).body) as { problems: string[] };
      expect(dump.problems.join('\n')).toMatch(/routes\.yaml:\d+: Flow (mapping|sequence)/);
    });
    expect(JSON.parse((await get('/a')).body)).toMatchObject({ pod: 'v2-pod' });
  });

  it('reports status in /config_dump and counts requests in /metrics', async () => {
    const dump = JSON.parse((await gw.adminGet('/config_dump')).body) as {
      statuses: Record<
        string,
        { status: { parents?: { conditions: { type: string; status: string }[] }[] } }
      >;
    };
    const parent = dump.statuses[`HTTPRoute/${NS}/store`]?.status.parents?.[0];
    expect(parent?.conditions).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'Accepted', status: 'True' }),
        expect.objectContaining({ type: 'ResolvedRefs', status: 'True' }),
      ]),
    );
    const metrics = (await gw.adminGet('/metrics')).body;
    expect(metrics).toMatch(/clusterset_gateway_requests_total\{[^}]*route="shop\/store"[^}]*\} \d+/);
  });
});
