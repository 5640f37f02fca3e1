import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { Agent, ProxyAgent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EchoServer, startEchoServer } from '../../src/demo/echo/echo-server.ts';
import { eventually, freePort, type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import {
  gateway,
  gatewayClass,
  httpRoute,
  importedSlice,
  serviceImport,
  serviceSlice,
  yamlDocs,
} from '../support/manifests.ts';

/**
 * Issue 6, "Done when": a client calls services of the clusterset through the east-west listener, by Host and
 * as HTTP_PROXY; the nearest endpoints answer as trafficDistribution asks, failover is invisible to clients, a
 * GAMMA HTTPRoute (Service parentRef) splits traffic by weight; unknown names get 404 and non-HTTP bytes are
 * refused without harm.
 */
const NS = 'demo';
const WEB = 'web.demo.svc.clusterset.local';

interface Pod {
  readonly pod: string;
  readonly service: string;
  readonly cluster: string;
  readonly zone: string;
  readonly node: string;
  port: number;
  server?: EchoServer | undefined;
}

const pod = (pod: string, service: string, cluster: string, zone: string, node: string): Pod => ({
  pod,
  service,
  cluster,
  zone,
  node,
  port: 0,
});

const PODS: Pod[] = [
  // `web`: PreferSameZone; the proxy sits in east-1 / us-east-1a / east-1-node-a.
  pod('web-near-1', 'web', 'east-1', 'us-east-1a', 'east-1-node-b'),
  pod('web-near-2', 'web', 'east-1', 'us-east-1a', 'east-1-node-c'),
  pod('web-same-cluster', 'web', 'east-1', 'us-east-1b', 'east-1-node-d'),
  pod('web-far', 'web', 'west-1', 'us-west-1a', 'west-1-node-a'),
  // `cache`: PreferSameNode.
  pod('cache-on-node', 'cache', 'east-1', 'us-east-1a', 'east-1-node-a'),
  pod('cache-same-zone', 'cache', 'east-1', 'us-east-1a', 'east-1-node-b'),
  // `shop`: a local Service whose mesh HTTPRoute splits 3:1 between two versions.
  pod('shop-v1', 'shop-v1', 'east-1', 'us-east-1a', 'east-1-node-b'),
  pod('shop-v2', 'shop-v2', 'east-1', 'us-east-1a', 'east-1-node-b'),
];

const byName = (name: string): Pod => PODS.find((p) => p.pod === name) as Pod;

async function up(p: Pod): Promise<void> {
  p.server = await startEchoServer({
    host: '127.0.0.1',
    port: p.port,
    identity: {
      namespace: NS,
      service: p.service,
      pod: p.pod,
      cluster: p.cluster,
      zone: p.zone,
      node: p.node,
    },
  });
  p.port = p.server.port;
}

async function down(p: Pod): Promise<void> {
  await p.server?.close();
  p.server = undefined;
}

function manifests(northSouthPort: number): string {
  const slices = PODS.map((p) => {
    const endpoint = { port: p.port, zone: p.zone, node: p.node, pod: p.pod };
    if (p.service.startsWith('shop-')) return serviceSlice(p.pod, p.service, NS, endpoint);
    const slice = importedSlice(p.pod, p.service, NS, p.cluster, endpoint) as {
      metadata: { labels: Record<string, string> };
    };
    slice.metadata.labels['topology.kubernetes.io/region'] = p.cluster === 'west-1' ? 'us-west' : 'us-east';
    return slice;
  });
  const service = (name: string) => ({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: NS },
    spec: { ports: [{ name: 'http', port: 80 }] },
  });
  return yamlDocs(
    gatewayClass(),
    gateway('edge', NS, [{ name: 'http', protocol: 'HTTP', port: northSouthPort }]),
    httpRoute('web-edge', NS, {
      parentRefs: [{ name: 'edge' }],
      rules: [
        { backendRefs: [{ group: 'multicluster.x-k8s.io', kind: 'ServiceImport', name: 'web', port: 80 }] },
      ],
    }),
    serviceImport('web', NS, 'PreferSameZone'),
    serviceImport('cache', NS, 'PreferSameNode'),
    service('shop'),
    service('shop-v1'),
    service('shop-v2'),
    httpRoute('shop-split', NS, {
      parentRefs: [{ group: '', kind: 'Service', name: 'shop', port: 80 }],
      rules: [
        {
          matches: [{ path: { type: 'PathPrefix', value: '/cart' } }],
          backendRefs: [
            { name: 'shop-v1', port: 80, weight: 3 },
            { name: 'shop-v2', port: 80, weight: 1 },
          ],
        },
      ],
    }),
    ...slices,
  );
}

interface Echo {
  readonly pod: string;
  readonly path: string;
  readonly host: string;
}

describe('east-west listener', () => {
  let gw: GatewayProcess;
  let ewPort: number;
  let nsPort: number;
  const agent = new Agent({ keepAliveTimeout: 30_000, connections: 4 });

  beforeAll(async () => {
    for (const p of PODS) await up(p);
    ewPort = await freePort();
    nsPort = await freePort();
    gw = await startGateway({
      args: [
        '--east-west-port',
        String(ewPort),
        '--cluster',
        'east-1',
        '--zone',
        'us-east-1a',
        '--region',
        'us-east',
        '--node',
        'east-1-node-a',
        '--outlier-base-ejection-ms',
        '300',
        '--access-log',
      ],
      manifests: { 'east-west.yaml': manifests(nsPort) },
    });
    await eventually(async () => expect((await call(WEB, '/')).status).toBe(200));
  });

  afterAll(async () => {
    await gw?.stop();
    await agent.close();
    await Promise.all(PODS.map(down));
  });

  /** One request by Host header; the body parsed when the echo server answered. */
  async function call(host: string, path: string) {
    const response = await request(`http://127.0.0.1:${ewPort}${path}`, {
      headers: { host },
      dispatcher: agent,
    });
    const text = await response.body.text();
    const echo = response.statusCode === 200 ? (JSON.parse(text) as Echo) : undefined;
    return { status: response.statusCode, text, echo, type: response.headers['content-type'] };
  }

  async function pods(host: string, path: string, count: number): Promise<string[]> {
    const out: string[] = [];
    for (let i = 0; i < count; i++) {
      const { status, echo, text } = await call(host, path);
      if (status !== 200 || echo === undefined) throw new Error(`${status} ${text}`);
      out.push(echo.pod);
    }
    return out;
  }

  it('routes Host <svc>.<ns>.svc.clusterset.local to the nearest zone of the ServiceImport', async () => {
    const { echo } = await call(WEB, '/hello?x=1');
    expect(echo).toMatchObject({ path: '/hello?x=1', host: WEB });
    const seen = await pods(`${WEB}:80`, '/', 30);
    expect(seen.every((p) => p === 'web-near-1' || p === 'web-near-2')).toBe(true);
  });

  it('normalizes paths before matching, as the Gateway listeners, and refuses bad framing with 400', async () => {
    const { echo } = await call(WEB, '/a/../%68ello//x/./?q=/../');
    expect(echo).toMatchObject({ path: '/hello/x/?q=/../' });
    expect((await call(WEB, '/a/..;/hello')).status).toBe(400);
    const raw = await new Promise<string>((resolve) => {
      const socket = connect(ewPort, '127.0.0.1', () => socket.write(`GET / HTTP/1.1\nHost: ${WEB}\n\n`));
      let out = '';
      socket.on('data', (d: Buffer) => (out += d.toString('latin1')));
      socket.on('close', () => resolve(out));
      socket.on('error', () => resolve(out));
    });
    expect(raw).toMatch(/^HTTP\/1\.1 400 /);
  });

  it('works as HTTP_PROXY: the absolute-form target names the service and the backend sees origin form', async () => {
    const proxy = new ProxyAgent({ uri: `http://127.0.0.1:${ewPort}`, proxyTunnel: false });
    try {
      const response = await request(`http://${WEB}/via/proxy?y=2`, { dispatcher: proxy });
      const echo = (await response.body.json()) as Echo;
      expect(response.statusCode).toBe(200);
      expect(echo.path).toBe('/via/proxy?y=2');
      expect(['web-near-1', 'web-near-2']).toContain(echo.pod);
    } finally {
      await proxy.close();
    }
    // RFC 9112 §3.2.2: the target's authority wins over a Host header that says otherwise.
    const raw = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest(
        {
          host: '127.0.0.1',
          port: ewPort,
          path: `http://${WEB}/abs`,
          headers: { host: 'elsewhere.example' },
        },
        (res) => {
          let body = '';
          res.on('data', (chunk: Buffer) => {
            body += chunk.toString();
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect(raw.status).toBe(200);
    expect(JSON.parse(raw.body)).toMatchObject({ path: '/abs', service: 'web' });
  });

  it('prefers the proxy node for PreferSameNode', async () => {
    const seen = await pods('cache.demo.svc.clusterset.local', '/', 20);
    expect(new Set(seen)).toEqual(new Set(['cache-on-node']));
  });

  it('splits by the weights of an HTTPRoute whose parentRef is the Service (GAMMA)', async () => {
    const seen = await pods('shop.demo.svc.clusterset.local', '/cart/items', 400);
    const v1 = seen.filter((p) => p === 'shop-v1').length / seen.length;
    expect(seen.every((p) => p === 'shop-v1' || p === 'shop-v2')).toBe(true);
    // 3:1 gives 0.75; 400 draws have a standard deviation of about 0.022.
    expect(v1).toBeGreaterThan(0.65);
    expect(v1).toBeLessThan(0.85);
    // The route replaces the service's implicit routing: a path it does not match gets 404.
    const miss = await call('shop.demo.svc.clusterset.local', '/elsewhere');
    expect(miss.status).toBe(404);
    expect(miss.text).toContain('shop.demo.svc.clusterset.local:80');
  });

  it('reports the mesh parent in the route status', async () => {
    const dump = JSON.parse((await gw.adminGet('/config_dump')).body) as {
      statuses: Record<string, { status: { parents: { parentRef: unknown; conditions: unknown[] }[] } }>;
    };
    expect(dump.statuses['HTTPRoute/demo/shop-split']?.status.parents).toEqual([
      expect.objectContaining({
        parentRef: { group: '', kind: 'Service', name: 'shop', port: 80 },
        controllerName: 'clusterset-gateway.io/gateway-controller',
        conditions: [
          expect.objectContaining({ type: 'Accepted', status: 'True' }),
          expect.objectContaining({ type: 'ResolvedRefs', status: 'True' }),
        ],
      }),
    ]);
  });

  it('answers 404 naming the host for names it does not serve', async () => {
    const unknown = await call('nope.demo.svc.clusterset.local', '/');
    expect(unknown.status).toBe(404);
    expect(unknown.type).toMatch(/^text\/plain/);
    expect(unknown.text).toContain('nope.demo.svc.clusterset.local:80');
    const wrongPort = await call(`${WEB}:8080`, '/');
    expect(wrongPort.status).toBe(404);
    expect(wrongPort.text).toContain(`${WEB}:8080`);
  });

  /** Writes raw bytes to the east-west listener and resolves with all it answers until it closes. */
  const exchange = (bytes: Buffer | string) =>
    new Promise<string>((resolve) => {
      const socket = connect(ewPort, '127.0.0.1');
      let answer = '';
      socket.on('data', (chunk: Buffer) => {
        answer += chunk.toString('latin1');
      });
      socket.on('error', () => resolve(answer));
      socket.on('close', () => resolve(answer));
      socket.write(bytes);
    });

  it('refuses non-HTTP bytes, TLS and CONNECTs it cannot tunnel cleanly and keeps serving', async () => {
    const garbage = Buffer.from(Array.from({ length: 256 }, (_, i) => (i * 151 + 7) % 256));
    expect(await exchange(garbage)).toMatch(/^HTTP\/1\.1 400 /);
    const clientHello = Buffer.from([0x16, 0x03, 0x01, 0x00, 0xa5, 0x01, 0x00, 0x00, 0xa1, 0x03, 0x03]);
    expect(await exchange(clientHello)).toMatch(/^HTTP\/1\.1 400 [\s\S]*TLS/);
    const unknownPort = await exchange(`CONNECT ${WEB}:443 HTTP/1.1\r\nHost: ${WEB}:443\r\n\r\n`);
    expect(unknownPort).toMatch(/^HTTP\/1\.1 404 [\s\S]*no service web\.demo\.svc\.clusterset\.local:443/);
    const noPort = await exchange(`CONNECT ${WEB} HTTP/1.1\r\nHost: ${WEB}\r\n\r\n`);
    expect(noPort).toMatch(/^HTTP\/1\.1 400 [\s\S]*CONNECT needs <service>/);

    expect((await call(WEB, '/')).status).toBe(200);
    const metrics = (await gw.adminGet('/metrics')).body;
    expect(metrics).toMatch(/clusterset_gateway_east_west_refused_total\{reason="tls"\} 1\b/);
    expect(metrics).toMatch(
      /clusterset_gateway_east_west_refused_total\{reason="connect-unknown-service"\} 1\b/,
    );
    expect(metrics).toMatch(
      /clusterset_gateway_east_west_refused_total\{reason="connect-bad-authority"\} 1\b/,
    );
    expect(metrics).toMatch(/clusterset_gateway_east_west_refused_total\{reason="not-http"\} [1-9]/);
    expect(metrics).toMatch(/clusterset_gateway_requests_total\{gateway="east-west",[^}]*code="200"\} [1-9]/);
  });

  it('holds requests to the same limits as the Gateway listeners: 431, 400, counted by reason', async () => {
    const huge = `GET / HTTP/1.1\r\nHost: ${WEB}\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`;
    expect(await exchange(huge)).toMatch(/^HTTP\/1\.1 431 /);
    const twoHosts = `GET / HTTP/1.1\r\nHost: ${WEB}\r\nHost: other.demo.svc.clusterset.local\r\n\r\n`;
    expect(await exchange(twoHosts)).toMatch(/^HTTP\/1\.1 400 [\s\S]*duplicate host/);
    expect((await call(WEB, '/')).status).toBe(200);
    const metrics = (await gw.adminGet('/metrics')).body;
    expect(metrics).toMatch(
      /clusterset_gateway_rejected_requests_total\{reason="request header fields too large"\} [1-9]/,
    );
    expect(metrics).toMatch(
      /clusterset_gateway_rejected_requests_total\{reason="duplicate host header"\} [1-9]/,
    );
  });

  it('writes an access line with direction, source, service, endpoint cluster and zone', async () => {
    const accessLine = (path: string) =>
      eventually(async () => {
        const found = gw
          .output()
          .split('\n')
          .find((l) => l.includes('"log":"access"') && l.includes(`"path":"${path}"`));
        if (found === undefined) throw new Error(`no access line for ${path} in:\n${gw.output()}`);
        return JSON.parse(found) as Record<string, unknown>;
      });
    await call(WEB, '/logged');
    const line = await accessLine('/logged');
    const northSouth = await request(`http://127.0.0.1:${nsPort}/edge-logged`, { dispatcher: agent });
    await northSouth.body.text();
    expect(northSouth.statusCode).toBe(200);
    expect(await accessLine('/edge-logged')).toMatchObject({
      direction: 'north-south',
      backend: 'ServiceImport/demo/web:80',
      status: 200,
    });
    expect(line).toMatchObject({
      direction: 'east-west',
      source: '127.0.0.1',
      service: `${WEB}:80`,
      backend: 'ServiceImport/demo/web:80',
      cluster: 'east-1',
      zone: 'us-east-1a',
      status: 200,
    });
    expect(typeof line.durationMs).toBe('number');
  });

  it('fails over when the near endpoints die, without a client error', async () => {
    let running = true;
    const seen: string[] = [];
    const failures: string[] = [];
    const client = async () => {
      while (running) {
        try {
          const { status, echo, text } = await call(WEB, '/');
          if (status !== 200 || echo === undefined) failures.push(`${status} ${text}`);
          else seen.push(echo.pod);
        } catch (error) {
          failures.push(String(error));
        }
      }
    };
    const clients = [client(), client(), client()];
    // Traffic is flowing to the near pods before they die, and the clients keep going until 30 answers in a row
    // come from the next tier.
    await eventually(async () => expect(seen.length).toBeGreaterThanOrEqual(10));
    await Promise.all([down(byName('web-near-1')), down(byName('web-near-2'))]);
    const afterDown = seen.length;
    await eventually(async () => {
      expect(seen.length).toBeGreaterThanOrEqual(afterDown + 30);
      expect(seen.slice(-30).every((p) => p === 'web-same-cluster')).toBe(true);
    });
    running = false;
    await Promise.all(clients);
    expect(failures).toEqual([]);
    expect(seen.slice(-30).every((p) => p === 'web-same-cluster')).toBe(true);

    await down(byName('cache-on-node'));
    const cache = await pods('cache.demo.svc.clusterset.local', '/', 20);
    expect(new Set(cache)).toEqual(new Set(['cache-same-zone']));
  });
});
