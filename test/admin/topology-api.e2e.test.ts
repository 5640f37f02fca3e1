import { request as httpRequest, type IncomingMessage } from 'node:http';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { type AdminServer, startAdminServer } from '../../src/admin/admin-server.ts';
import type { RouteLookupResult } from '../../src/admin/topology-listeners.ts';
import type { TopologyDocument } from '../../src/admin/topology-model.ts';
import { topologyRoutes } from '../../src/admin/topology-routes.ts';
import { type TopologyLimits, TopologyService } from '../../src/admin/topology-service.ts';
import { backend, endpoint, entry, IDENTITY, table } from './fixtures.ts';

const web = backend('web', [[endpoint('east-1', 'us-east-1a', 'node-a', 'web-1')]], ['zone']);
const api = backend('api', [[endpoint('west-1', 'us-west-1a')]], ['clusterset']);
const TABLE = {
  ...table([web, api], [entry('shop/api', '/api', [[api.id, 1]]), entry('shop/web', '/', [[web.id, 1]])]),
  layer4Ports: [
    {
      port: 5432,
      protocol: 'TCP' as const,
      listener: 'shop/edge/postgres',
      gateway: 'shop/edge',
      routes: [
        {
          route: 'shop/pg',
          backends: [{ weight: 1, target: { kind: 'Backend' as const, id: web.id }, filters: [] }],
        },
      ],
    },
  ],
};
const logger = pino({ level: 'silent' });

let admin: AdminServer | undefined;
let service: TopologyService | undefined;
afterEach(async () => {
  service?.stop();
  await admin?.close();
});

async function start(limits: Partial<TopologyLimits> = {}, intervalMs = 50): Promise<string> {
  const registry = new Registry();
  service = new TopologyService(
    { table: () => TABLE, balancers: () => ({}), identity: () => IDENTITY, notes: () => [] },
    registry,
    logger,
    limits,
    intervalMs,
  );
  service.start();
  admin = await startAdminServer({
    host: '127.0.0.1',
    port: 0,
    registry,
    logger,
    state: { readiness: () => ({ ready: true, reasons: [] }), configDump: () => ({}) },
    extraRoutes: topologyRoutes(service, () => TABLE),
  });
  return `http://127.0.0.1:${admin.port}`;
}

/** Opens the event stream and resolves with the response once the first `data:` frame arrived. */
function openStream(url: string): Promise<{ res: IncomingMessage; first: TopologyDocument; close(): void }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${url}/api/topology/stream`, (res) => {
      if (res.statusCode !== 200) {
        resolve({ res, first: undefined as never, close: () => req.destroy() });
        return;
      }
      let buffered = '';
      const onData = (chunk: Buffer) => {
        buffered += chunk.toString();
        const match = /^data: (.*)$/m.exec(buffered);
        if (match) {
          res.off('data', onData);
          resolve({ res, first: JSON.parse(match[1]!), close: () => req.destroy() });
        }
      };
      res.on('data', onData);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('topology API on the admin server', () => {
  it('serves the page, its script and style from the repository, with a same-origin CSP', async () => {
    const url = await start();
    for (const path of ['/', '/ui']) {
      const page = await fetch(`${url}${path}`);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(page.headers.get('content-security-policy')).toContain("default-src 'self'");
      const html = await page.text();
      expect(html).toContain('<script src="/ui/app.js"></script>');
      expect(html).not.toMatch(/https?:\/\//);
    }
    const script = await fetch(`${url}/ui/app.js`);
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(await script.text()).toContain("new EventSource('/api/topology/stream')");
    expect((await fetch(`${url}/ui/app.css`)).status).toBe(200);
  });

  it('answers /api/topology with the documented document', async () => {
    const url = await start();
    const response = await fetch(`${url}/api/topology`);
    expect(response.headers.get('content-type')).toBe('application/json');
    const doc = (await response.json()) as TopologyDocument;
    expect(doc.version).toBe(1);
    expect(doc.gateway.zone).toBe('us-east-1a');
    expect(doc.backends.map((b) => b.id)).toEqual([api.id, web.id]);
    expect(doc.listeners.map((l) => [l.id, l.protocol])).toEqual([
      ['shop/edge/http', 'HTTP'],
      ['shop/edge/postgres', 'TCP'],
    ]);
    expect(doc.listeners[1]!.virtualHosts[0]!.routes[0]!.backends[0]!.backend).toBe(web.id);
    expect(doc.backends.find((b) => b.id === web.id)!.usedBy.map((u) => u.route)).toEqual([
      'shop/web',
      'shop/pg',
    ]);
  });

  it('builds the document at most once per tick however many ask', async () => {
    const url = await start({}, 60_000);
    const times = await Promise.all(
      Array.from({ length: 20 }, async () => {
        const doc = (await (await fetch(`${url}/api/topology`)).json()) as TopologyDocument;
        return doc.generatedAt;
      }),
    );
    expect(new Set(times).size).toBe(1);
  });

  it('tells which listener and route a hostname and path go to', async () => {
    const url = await start();
    const lookup = async (query: string) =>
      (await (await fetch(`${url}/api/route?${query}`)).json()) as { matches: RouteLookupResult[] };
    const apiHit = await lookup('host=SHOP.example.com:8080&path=/api/orders');
    expect(apiHit.matches).toHaveLength(1);
    expect(apiHit.matches[0]!.listener).toBe('shop/edge/http');
    expect(apiHit.matches[0]!.entry?.route).toBe('shop/api');
    expect((await lookup('host=shop.example.com&path=/apix')).matches[0]!.entry?.route).toBe('shop/web');
    expect((await lookup('host=other.example.com&path=/')).matches).toEqual([]);
    expect((await fetch(`${url}/api/route?path=/`)).status).toBe(400);
    expect((await fetch(`${url}/api/route?host=a&path=nope`)).status).toBe(400);
  });

  it('streams the document as Server-Sent Events and refuses streams past the limit', async () => {
    const url = await start({ maxStreams: 2 });
    const one = await openStream(url);
    const two = await openStream(url);
    expect(one.res.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(one.first.backends).toHaveLength(2);
    const three = await openStream(url);
    expect(three.res.statusCode).toBe(503);
    expect(three.res.headers['retry-after']).toBe('5');
    three.close();
    expect(service!.streamCount).toBe(2);
    one.close();
    await new Promise<void>((resolve) => one.res.once('close', () => resolve()));
    const again = await openStream(url);
    expect(again.res.statusCode).toBe(200);
    two.close();
    again.close();
  });

  it('ends a stream after its lifetime, so one browser cannot hold it for hours', async () => {
    const url = await start({ maxStreamLifetimeMs: 100 });
    const stream = await openStream(url);
    await new Promise<void>((resolve) => stream.res.once('end', () => resolve()));
    expect(service!.streamCount).toBe(0);
  });
});
