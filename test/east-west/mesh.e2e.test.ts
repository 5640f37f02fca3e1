import { connect } from 'node:net';
import { Agent, ProxyAgent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EchoServer, startEchoServer } from '../../src/demo/echo/echo-server.ts';
import { type GreeterServer, startGreeterServer } from '../../src/demo/greeter/greeter-server.ts';
import { eventually, freePort, type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { greeterStub, hello, helloStream } from '../support/greeter-stub.ts';
import { httpRoute, serviceSlice, yamlDocs } from '../support/manifests.ts';

/**
 * Issue 32: the east-west listener as a GAMMA mesh. Every Service is served under the name a pod uses for it
 * (`<svc>.<ns>.svc.cluster.local`, the short forms a resolver expands, its ClusterIP) and its clusterset name,
 * on each of its ports, with no route; HTTPRoutes and GRPCRoutes whose parent is a Service take over its
 * traffic; what the mesh leaves out (a namespace, a labelled Service) is not served. Real requests through the
 * east-west port to real backends.
 */
const NS = 'shop';
const OTHER = 'billing';

interface Echo {
  readonly pod: string;
  readonly path: string;
  readonly host: string;
  readonly headers: Record<string, string[]>;
}

interface Statuses {
  statuses: Record<
    string,
    {
      status: {
        parents: { parentRef: unknown; conditions: { type: string; status: string; reason: string }[] }[];
      };
    }
  >;
}

describe('east-west listener as a mesh (GAMMA)', () => {
  let gw: GatewayProcess;
  let ewPort: number;
  const echoes: EchoServer[] = [];
  const greeters: GreeterServer[] = [];
  const agent = new Agent({ keepAliveTimeout: 30_000, connections: 4 });

  const echo = async (pod: string, service: string, namespace = NS): Promise<number> => {
    const server = await startEchoServer({
      host: '127.0.0.1',
      port: 0,
      identity: { namespace, service, pod, cluster: 'east-1', zone: 'us-east-1a' },
    });
    echoes.push(server);
    return server.port;
  };

  const svc = (name: string, namespace: string, ports: Record<string, unknown>[], extra = {}) => ({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace, ...extra },
    spec: { ...(name === 'cart' ? { clusterIP: '10.96.0.42' } : {}), ports },
  });

  beforeAll(async () => {
    const cart = await echo('cart-1', 'cart');
    const cartAdmin = await echo('cart-admin-1', 'cart');
    const catalog = await echo('catalog-1', 'catalog');
    const catalogV2 = await echo('catalog-v2-1', 'catalog-v2');
    const ledger = await echo('ledger-1', 'ledger', OTHER);
    const hidden = await echo('hidden-1', 'hidden');
    for (const pod of ['greeter-v1', 'greeter-v2']) {
      greeters.push(await startGreeterServer({ identity: { pod, cluster: 'east-1', zone: 'us-east-1a' } }));
    }
    const greeterSlice = (pod: string, service: string, port: number) => ({
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: pod, namespace: NS, labels: { 'kubernetes.io/service-name': service } },
      addressType: 'IPv4',
      endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: true } }],
      ports: [{ name: 'grpc', protocol: 'TCP', port, appProtocol: 'kubernetes.io/h2c' }],
    });
    const twoPortSlice = (name: string, service: string, http: number, admin: number) => ({
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name, namespace: NS, labels: { 'kubernetes.io/service-name': service } },
      addressType: 'IPv4',
      endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: true } }],
      ports: [
        { name: 'http', protocol: 'TCP', port: http },
        { name: 'admin', protocol: 'TCP', port: admin },
      ],
    });
    const grpcPort = { name: 'grpc', port: 50051, appProtocol: 'kubernetes.io/h2c' };
    ewPort = await freePort();
    gw = await startGateway({
      args: ['--east-west-port', String(ewPort), '--cluster', 'east-1', '--mesh-namespaces', `${NS},other`],
      manifests: {
        'mesh.yaml': yamlDocs(
          // cart: two ports, no route at all (MeshBasic): each port goes to its own endpoints.
          svc('cart', NS, [
            { name: 'http', port: 80 },
            { name: 'admin', port: 9000 },
          ]),
          twoPortSlice('cart-a', 'cart', cart, cartAdmin),
          // catalog: a mesh HTTPRoute on port 80 sends /v2 to catalog-v2, adds a header, redirects /old.
          svc('catalog', NS, [{ name: 'http', port: 80 }]),
          svc('catalog-v2', NS, [{ name: 'http', port: 80 }]),
          serviceSlice('catalog-a', 'catalog', NS, { port: catalog }),
          serviceSlice('catalog-v2-a', 'catalog-v2', NS, { port: catalogV2 }),
          httpRoute('catalog', NS, {
            parentRefs: [{ group: '', kind: 'Service', name: 'catalog', port: 80 }],
            rules: [
              {
                matches: [{ path: { type: 'PathPrefix', value: '/v2' } }],
                filters: [
                  {
                    type: 'RequestHeaderModifier',
                    requestHeaderModifier: { set: [{ name: 'x-mesh', value: 'v2' }] },
                  },
                ],
                backendRefs: [{ name: 'catalog-v2', port: 80 }],
              },
              {
                matches: [{ path: { type: 'PathPrefix', value: '/old' } }],
                filters: [
                  {
                    type: 'RequestRedirect',
                    requestRedirect: { path: { type: 'ReplaceFullPath', replaceFullPath: '/new' } },
                  },
                ],
              },
              {
                matches: [{ path: { type: 'PathPrefix', value: '/' } }],
                backendRefs: [{ name: 'catalog', port: 80 }],
              },
            ],
          }),
          // greeter: a GRPCRoute with the Service as parent sends Hello to v2 and the rest to v1.
          svc('greeter', NS, [grpcPort]),
          svc('greeter-v1', NS, [grpcPort]),
          svc('greeter-v2', NS, [grpcPort]),
          greeterSlice('greeter-v1-a', 'greeter-v1', greeters[0]!.port),
          greeterSlice('greeter-v2-a', 'greeter-v2', greeters[1]!.port),
          {
            apiVersion: 'gateway.networking.k8s.io/v1',
            kind: 'GRPCRoute',
            metadata: { name: 'greeter', namespace: NS },
            spec: {
              parentRefs: [{ group: '', kind: 'Service', name: 'greeter' }],
              rules: [
                {
                  matches: [{ method: { service: 'demo.Greeter', method: 'Hello' } }],
                  backendRefs: [{ name: 'greeter-v2', port: 50051 }],
                },
                { backendRefs: [{ name: 'greeter-v1', port: 50051 }] },
              ],
            },
          },
          // Left out of the mesh: a labelled Service, and a namespace --mesh-namespaces does not list.
          svc('hidden', NS, [{ name: 'http', port: 80 }], {
            labels: { 'clusterset-gateway.io/mesh': 'disabled' },
          }),
          serviceSlice('hidden-a', 'hidden', NS, { port: hidden }),
          svc('ledger', OTHER, [{ name: 'http', port: 80 }]),
          serviceSlice('ledger-a', 'ledger', OTHER, { port: ledger }),
          httpRoute('ledger', OTHER, {
            parentRefs: [{ group: '', kind: 'Service', name: 'ledger' }],
            rules: [{ backendRefs: [{ name: 'ledger', port: 80 }] }],
          }),
          // Bad parents: no such Service, no such port.
          httpRoute('broken', NS, {
            parentRefs: [
              { group: '', kind: 'Service', name: 'nowhere' },
              { group: '', kind: 'Service', name: 'cart', port: 8443 },
            ],
            rules: [{ backendRefs: [{ name: 'cart', port: 80 }] }],
          }),
        ),
      },
    });
    await eventually(async () => expect((await get('cart.shop.svc.cluster.local', '/')).status).toBe(200));
  });

  afterAll(async () => {
    await gw?.stop();
    await agent.close();
    await Promise.all(echoes.map((e) => e.close()));
    await Promise.all(greeters.map((g) => g.close()));
  });

  /** One request by Host header. */
  async function get(host: string, path: string, headers: Record<string, string> = {}) {
    const response = await request(`http://127.0.0.1:${ewPort}${path}`, {
      headers: { host, ...headers },
      dispatcher: agent,
    });
    const text = await response.body.text();
    return {
      status: response.statusCode,
      text,
      echo: response.statusCode === 200 ? (JSON.parse(text) as Echo) : undefined,
      location: response.headers.location,
    };
  }

  it('serves a Service with no route under its cluster-local name, on each port, to its endpoints', async () => {
    expect((await get('cart.shop.svc.cluster.local', '/items?id=3')).echo).toMatchObject({
      pod: 'cart-1',
      path: '/items?id=3',
    });
    expect((await get('cart.shop.svc.cluster.local:9000', '/')).echo?.pod).toBe('cart-admin-1');
    // A port the Service does not have is not served.
    const missing = await get('cart.shop.svc.cluster.local:8443', '/');
    expect(missing.status).toBe(404);
    expect(missing.text).toContain('cart.shop.svc.cluster.local:8443');
  });

  it.each([
    'cart.shop',
    'cart.shop.svc',
    'CART.Shop.svc.cluster.local.',
    'cart.shop.svc.clusterset.local',
    '10.96.0.42',
  ])('answers the names a pod may use for the same Service: %s', async (host) => {
    expect((await get(host, '/')).echo?.pod).toBe('cart-1');
    expect((await get(`${host}:9000`, '/')).echo?.pod).toBe('cart-admin-1');
  });

  it('serves the name in an absolute-form target (HTTP_PROXY), whatever the Host header says', async () => {
    const proxy = new ProxyAgent({ uri: `http://127.0.0.1:${ewPort}`, proxyTunnel: false });
    try {
      const response = await request('http://catalog.shop.svc.cluster.local/v2/list', {
        dispatcher: proxy,
        headers: { host: 'cart.shop.svc.cluster.local' },
      });
      const body = (await response.body.json()) as Echo;
      expect(body.pod).toBe('catalog-v2-1');
      expect(body.path).toBe('/v2/list');
    } finally {
      await proxy.close();
    }
  });

  it('applies an HTTPRoute with a Service parent under every name of the Service', async () => {
    for (const host of [
      'catalog.shop.svc.cluster.local',
      'catalog.shop',
      'catalog.shop.svc.clusterset.local',
    ]) {
      const v2 = await get(host, '/v2/items');
      expect(v2.echo?.pod).toBe('catalog-v2-1');
      expect(v2.echo?.headers['X-Mesh']).toEqual(['v2']);
      expect((await get(host, '/items')).echo?.pod).toBe('catalog-1');
    }
  });

  it('keeps the requested name in a redirect', async () => {
    const full = await get('catalog.shop.svc.cluster.local', '/old');
    expect(full.status).toBe(302);
    expect(full.location).toBe('http://catalog.shop.svc.cluster.local/new');
    const short = await get('catalog.shop', '/old');
    expect(short.location).toBe('http://catalog.shop/new');
  });

  it('routes gRPC calls by a GRPCRoute whose parent is the Service (h2c through the east-west port)', async () => {
    const stub = greeterStub(`127.0.0.1:${ewPort}`, 'greeter.shop.svc.cluster.local:50051');
    try {
      for (let i = 0; i < 5; i++) expect((await hello(stub, 'mesh')).pod).toBe('greeter-v2');
      const stream = await helloStream(stub, 'mesh');
      expect(stream.map((r) => r.pod)).toEqual(['greeter-v1', 'greeter-v1', 'greeter-v1']);
    } finally {
      stub.close();
    }
    const statuses = JSON.parse((await gw.adminGet('/config_dump')).body) as Statuses;
    expect(statuses.statuses['GRPCRoute/shop/greeter']?.status.parents).toEqual([
      expect.objectContaining({
        parentRef: { group: '', kind: 'Service', name: 'greeter' },
        conditions: [
          expect.objectContaining({ type: 'Accepted', status: 'True' }),
          expect.objectContaining({ type: 'ResolvedRefs', status: 'True' }),
        ],
      }),
    ]);
  });

  it('leaves out the Services the mesh does not serve, and says so on their routes', async () => {
    expect((await get('hidden.shop.svc.cluster.local', '/')).status).toBe(404);
    expect((await get('ledger.billing.svc.cluster.local', '/')).status).toBe(404);
    expect((await get('ledger.billing.svc.clusterset.local', '/')).status).toBe(404);
    const statuses = JSON.parse((await gw.adminGet('/config_dump')).body) as Statuses;
    const ledger = statuses.statuses['HTTPRoute/billing/ledger']?.status.parents[0];
    expect(ledger?.conditions[0]).toMatchObject({
      type: 'Accepted',
      status: 'False',
      reason: 'NoMatchingParent',
    });
  });

  it('refuses parents that do not exist or lack the port, and serves the rest', async () => {
    const statuses = JSON.parse((await gw.adminGet('/config_dump')).body) as Statuses;
    const parents = statuses.statuses['HTTPRoute/shop/broken']?.status.parents ?? [];
    expect(parents.map((p) => p.conditions[0])).toEqual([
      expect.objectContaining({ type: 'Accepted', status: 'False', reason: 'NoMatchingParent' }),
      expect.objectContaining({ type: 'Accepted', status: 'False', reason: 'NoMatchingParent' }),
    ]);
    expect((await get('cart.shop', '/')).echo?.pod).toBe('cart-1');
  });

  it('answers hostile requests with a 4xx and keeps serving', async () => {
    expect((await get('cart.shop.svc.cluster.local:99999', '/')).status).toBe(400);
    expect((await get('bad_host!.shop', '/')).status).toBe(400);
    expect((await get('cart', '/')).status).toBe(404);
    const raw = (bytes: string | Buffer) =>
      new Promise<string>((resolve, reject) => {
        const socket = connect(ewPort, '127.0.0.1', () => socket.end(bytes));
        let text = '';
        socket.on('data', (chunk: Buffer) => {
          text += chunk.toString('latin1');
        });
        socket.on('close', () => resolve(text));
        socket.on('error', reject);
      });
    expect(await raw('CONNECT cart.shop.svc.cluster.local HTTP/1.1\r\nHost: cart.shop\r\n\r\n')).toMatch(
      /^HTTP\/1\.1 400 /,
    );
    expect(await raw('CONNECT 10.0.0.1:80 HTTP/1.1\r\nHost: 10.0.0.1\r\n\r\n')).toMatch(/^HTTP\/1\.1 404 /);
    expect(await raw(Buffer.from([0x16, 0x03, 0x01, 0x00, 0x05, 0x01, 0x00, 0x00, 0x01, 0x00]))).toMatch(
      /^HTTP\/1\.1 400 /,
    );
    expect((await get('cart.shop', '/')).echo?.pod).toBe('cart-1');
  });
});
