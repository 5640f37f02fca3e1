import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEchoServer } from '../../src/demo/echo/echo-server.ts';
import { eventually, freePort, type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { gateway, gatewayClass, httpRoute, service, serviceSlice, yamlDocs } from '../support/manifests.ts';

const NS = 'shop';

/** One route per path prefix, each to its own Service; `backendRefs` is what the file says, typos included. */
const route = (name: string, path: string, backendRefs: unknown) =>
  httpRoute(name, NS, {
    parentRefs: [{ name: 'edge' }],
    hostnames: ['shop.example.com'],
    rules: [{ matches: [{ path: { type: 'PathPrefix', value: path } }], backendRefs }],
  });

describe('the file source refuses objects the API server would refuse, and keeps the last valid version', () => {
  const echoes: { port: number; close(): Promise<void> }[] = [];
  let gw: GatewayProcess;
  let port: number;
  const agent = new Agent({ keepAliveTimeout: 30_000, connections: 1 });

  beforeAll(async () => {
    echoes.push(
      await startEchoServer({
        host: '127.0.0.1',
        port: 0,
        identity: { namespace: NS, service: 'v1', pod: 'v1-pod', cluster: 'local', zone: 'z1' },
      }),
    );
    port = await freePort();
    gw = await startGateway({
      manifests: {
        'base.yaml': yamlDocs(
          gatewayClass(),
          gateway('edge', NS, [{ name: 'http', protocol: 'HTTP', port }]),
          service('v1', NS),
          serviceSlice('v1-a', 'v1', NS, { port: echoes[0]!.port, pod: 'v1-pod' }),
        ),
        'routes.yaml': yamlDocs(route('a', '/a', [{ name: 'v1', port: 80 }])),
      },
    });
  });

  afterAll(async () => {
    await gw?.stop();
    await agent.close();
    await Promise.all(echoes.map((echo) => echo.close()));
  });

  async function status(path: string): Promise<number> {
    const response = await request(`http://127.0.0.1:${port}${path}`, {
      headers: { host: 'shop.example.com' },
      dispatcher: agent,
    });
    await response.body.text();
    return response.statusCode;
  }

  async function problems(): Promise<string[]> {
    return (JSON.parse((await gw.adminGet('/config_dump')).body) as { problems: string[] }).problems;
  }

  /** The 1-based line of the first line of `text` containing `needle`. */
  const lineOf = (text: string, needle: string) => text.split('\n').findIndex((l) => l.includes(needle)) + 1;

  it('serves a valid route', async () => {
    expect(await status('/a')).toBe(200);
    expect(await problems()).toEqual([]);
  });

  it('backendRefs: "x" keeps the last valid route, new valid routes still appear, and the problem is listed', async () => {
    const text = yamlDocs(route('a', '/a', 'x'), route('c', '/c', [{ name: 'v1', port: 80 }]));
    await gw.writeManifest('routes.yaml', text);
    await eventually(async () => expect(await status('/c')).toBe(200));
    expect(await status('/a')).toBe(200);
    // One problem, at the line of the field; not kube-apiserver's second `<nil>` note that rules were skipped.
    expect(await problems()).toEqual([
      `routes.yaml:${lineOf(text, 'backendRefs: x')}: HTTPRoute shop/a (the last valid version stays in effect): spec.rules[0].backendRefs: Invalid value: "string": spec.rules[0].backendRefs in body must be of type array: "string"`,
    ]);
    const metrics = (await gw.adminGet('/metrics')).body;
    expect(metrics).toMatch(/^clusterset_gateway_invalid_objects 1$/m);
  });

  it('an object invalid from the start is not loaded; the problem is logged once, however many reloads', async () => {
    const text = yamlDocs(
      route('a', '/a', 'x'),
      route('c', '/c', [{ name: 'v1', port: 80 }]),
      route('d', 'd', [{ name: 'v1', port: 80 }]),
    );
    await gw.writeManifest('routes.yaml', text);
    const pathLine =
      text.split('\n').findIndex((l, i) => i > lineOf(text, 'name: d') && l.includes('path:')) + 1;
    const notLoaded = `routes.yaml:${pathLine}: HTTPRoute shop/d (not loaded): spec.rules[0].matches[0].path: Invalid value: "object": value must be an absolute path and start with '/' when type one of ['Exact', 'PathPrefix']`;
    await eventually(async () => expect(await problems()).toContain(notLoaded));
    expect(await status('/a')).toBe(200);
    expect(await status('/c')).toBe(200);
    await gw.writeManifest('other.yaml', yamlDocs(route('e', '/e', [{ name: 'v1', port: 80 }])));
    await eventually(async () => expect(await status('/e')).toBe(200));
    expect((await gw.adminGet('/metrics')).body).toMatch(/^clusterset_gateway_invalid_objects 2$/m);
    const logged = gw
      .output()
      .split('\n')
      .filter((line) => line.includes('HTTPRoute shop/a (the last valid'));
    expect(logged.filter((line) => line.includes('backendRefs in body must be of type array'))).toHaveLength(
      1,
    );
  });

  it('fixing the object clears the problem', async () => {
    await gw.writeManifest('routes.yaml', yamlDocs(route('a', '/a', [{ name: 'v1', port: 80 }])));
    await eventually(async () => expect(await problems()).toEqual([]));
    expect((await gw.adminGet('/metrics')).body).toMatch(/^clusterset_gateway_invalid_objects 0$/m);
  });
});
