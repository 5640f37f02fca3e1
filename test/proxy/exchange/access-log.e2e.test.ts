import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createTcpServer, type Server as TcpServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { BackendCluster } from '../../../src/ir/route-table.ts';
import { selfSignedCertificate } from '../../../src/net/self-signed-certificate.ts';
import { AccessLog } from '../../../src/proxy/exchange/access-log.ts';
import { LeanHttp1Connections } from '../../../src/proxy/listen/lean-http1-server.ts';
import { rawExchange } from '../../hostile/raw-client.ts';
import { backend, entry, simpleTable, startProxy, type TestProxy, to } from '../fixtures.ts';

type Line = Record<string, unknown>;

/** An access log whose lines are kept in memory, parsed. */
function memoryAccessLog(): { log: AccessLog; lines: Line[] } {
  const lines: Line[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const text of chunk.toString().split('\n')) if (text !== '') lines.push(JSON.parse(text) as Line);
      callback();
    },
  });
  return { log: new AccessLog(pino({ level: 'info', base: null, timestamp: false }, sink)), lines };
}

function listen<T extends Server | TcpServer>(server: T): Promise<number> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)),
  );
}

/** Backends for every outcome: answers, a connection closed mid-body or before the head, silence. */
async function startBackends(): Promise<{ ports: Record<string, number>; close(): void }> {
  const ok = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(req.url?.endsWith('/teapot') ? 503 : 200, { 'content-type': 'text/plain' });
      res.end(`seen ${req.method} ${req.url}`);
    });
  });
  const cut = createTcpServer((socket) =>
    socket.once('data', () => {
      socket.write('HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\npartial');
      setTimeout(() => socket.destroy(), 20);
    }),
  );
  const hangUp = createTcpServer((socket) => socket.once('data', () => socket.destroy()));
  const silent = createTcpServer(() => {});
  const refused = createTcpServer();
  const servers = [ok, cut, hangUp, silent, refused];
  const [okPort, cutPort, hangUpPort, silentPort, refusedPort] = await Promise.all(servers.map(listen));
  await new Promise((resolve) => refused.close(resolve));
  return {
    ports: { ok: okPort!, cut: cutPort!, hangUp: hangUpPort!, silent: silentPort!, refused: refusedPort! },
    close: () => {
      for (const server of servers) server.close();
      ok.closeAllConnections();
    },
  };
}

/** Each request on a connection of its own, answered (or cut) before the next. */
const REQUESTS: readonly string[] = [
  'GET /ok/a?x=1',
  'HEAD /ok/b',
  'POST /ok/upload',
  'GET /ok/teapot',
  'GET /none',
  'GET /cut/1',
  'GET /hang-up/1',
  'GET /silent/1',
  'GET /refused/1',
];

function rawRequest(line: string): string {
  const [method, target] = line.split(' ');
  const body = method === 'POST' ? 'Content-Length: 5\r\n\r\nhello' : '\r\n';
  return `${method} ${target} HTTP/1.1\r\nHost: example.com\r\nConnection: close\r\n${body}`;
}

/** Lines as both paths must write them: without the clock's and the client port's values. */
function comparable(line: Line): Line {
  const { durationMs, sourcePort, ...rest } = line;
  expect(typeof durationMs).toBe('number');
  expect(typeof sourcePort).toBe('number');
  return rest;
}

describe('the access log on both HTTP/1.1 server paths', () => {
  let backends: Awaited<ReturnType<typeof startBackends>>;
  const proxies: TestProxy[] = [];
  const logs: Record<'lean' | 'node', { log: AccessLog; lines: Line[] }> = {
    lean: memoryAccessLog(),
    node: memoryAccessLog(),
  };
  const accepted = vi.spyOn(LeanHttp1Connections.prototype, 'accept');

  beforeAll(async () => {
    backends = await startBackends();
    const clusters = Object.entries(backends.ports).map(([name, port]) => backend(name, [port]));
    const routes = clusters.map((cluster) =>
      entry([to(cluster)], {
        route: `default/${cluster.name}`,
        path: { kind: 'PathPrefix', value: `/${cluster.name === 'hangUp' ? 'hang-up' : cluster.name}` },
        timeouts: { backendRequestMs: 300 },
      }),
    );
    const table = simpleTable(routes, clusters);
    for (const path of ['lean', 'node'] as const) {
      proxies.push(
        await startProxy(table, undefined, { accessLog: logs[path].log, leanHttp1: path === 'lean' }),
      );
    }
  });

  afterAll(async () => {
    accepted.mockRestore();
    await Promise.all(proxies.map((proxy) => proxy.close()));
    backends.close();
  });

  it('writes the same line for the same request on the lean path as on Node’s', async () => {
    const [lean, node] = proxies;
    for (const [index, proxy] of [lean!, node!].entries()) {
      const lines = logs[index === 0 ? 'lean' : 'node'].lines;
      for (const [i, request] of REQUESTS.entries()) {
        await rawExchange(proxy.port(), rawRequest(request), { idleMs: 3000 });
        // The line is written when the request ends, which may be after the client saw the connection close.
        await vi.waitFor(() => expect(lines).toHaveLength(i + 1), { timeout: 3000 });
      }
    }
    // --access-log no longer turns the lean path off: it took every connection of its proxy.
    expect(accepted).toHaveBeenCalledTimes(REQUESTS.length);
    expect(logs.lean.lines.map(comparable)).toEqual(logs.node.lines.map(comparable));
  });

  it('records status, bytes, attempts and how the last attempt failed, from the exchange', () => {
    const { ports } = backends;
    const byPath = new Map(logs.lean.lines.map((line) => [line.path, line]));
    const endpoint = (name: string) => ({
      endpoint: `127.0.0.1:${ports[name]}`,
      cluster: 'cluster-a',
      zone: 'zone-a',
    });
    expect(byPath.get('/ok/a?x=1')).toMatchObject({
      direction: 'north-south',
      source: '127.0.0.1',
      method: 'GET',
      service: 'example.com',
      backend: 'Service/default/ok:80',
      ...endpoint('ok'),
      status: 200,
      bytes: 'seen GET /ok/a?x=1'.length,
      attempts: 1,
    });
    expect(byPath.get('/ok/a?x=1')).not.toHaveProperty('failure');
    expect(byPath.get('/ok/b')).toMatchObject({ method: 'HEAD', status: 200, bytes: 0, attempts: 1 });
    expect(byPath.get('/ok/upload')).toMatchObject({ method: 'POST', status: 200, bytes: 20 });
    expect(byPath.get('/ok/teapot')).toMatchObject({ status: 503, attempts: 1 });
    expect(byPath.get('/none')).toMatchObject({ status: 404, bytes: 'no route\n'.length, attempts: 0 });
    expect(byPath.get('/none')).not.toHaveProperty('backend');
    // The head went out: the client got its 200, cut; the line says what cut it.
    expect(byPath.get('/cut/1')).toMatchObject({
      ...endpoint('cut'),
      status: 200,
      bytes: 'partial'.length,
      failure: 'reset-mid-body',
    });
    // A GET whose connection closed before any answer is sent again once, on a connection of its own.
    expect(byPath.get('/hang-up/1')).toMatchObject({
      status: 502,
      attempts: 2,
      failure: 'reset-before-response',
    });
    expect(byPath.get('/silent/1')).toMatchObject({ status: 504, attempts: 1, failure: 'response-timeout' });
    expect(byPath.get('/refused/1')).toMatchObject({
      ...endpoint('refused'),
      status: 502,
      attempts: 1,
      failure: 'refused',
    });
  });
});

describe('the access log of TLS upstreams (undici, behind its boundary)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'csg-access-tls-'));
  const { cert, key } = selfSignedCertificate({
    dir,
    name: 'backend',
    commonName: 'backend.example',
    subjectAltNames: ['DNS:backend.example'],
    days: 1,
  });
  const backendServer = createHttpsServer({ cert, key }, (_req, res) => res.end('over tls'));
  const { log, lines } = memoryAccessLog();
  let proxy: TestProxy;
  let refusedPort = 0;

  beforeAll(async () => {
    const port = await listen(backendServer);
    const closed = createTcpServer();
    refusedPort = await listen(closed);
    await new Promise((resolve) => closed.close(resolve));
    const tlsBackend = (name: string, serverName: string, backendPort: number): BackendCluster => ({
      ...backend(name, [backendPort]),
      tls: { policy: `default/${name}`, serverName, caPem: cert, subjectAltNames: [] },
    });
    const clusters = [
      tlsBackend('verified', 'backend.example', port),
      tlsBackend('misnamed', 'other.example', port),
      tlsBackend('gone', 'backend.example', refusedPort),
    ];
    const routes = clusters.map((cluster) =>
      entry([to(cluster)], {
        route: `default/${cluster.name}`,
        path: { kind: 'PathPrefix', value: `/${cluster.name}` },
      }),
    );
    proxy = await startProxy(simpleTable(routes, clusters), undefined, { accessLog: log });
  });

  afterAll(async () => {
    await proxy.close();
    backendServer.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('names a certificate the policy refuses a TLS error, and a closed port refused', async () => {
    const statuses: number[] = [];
    for (const [i, path] of ['/verified', '/misnamed', '/gone'].entries()) {
      const answer = await rawExchange(proxy.port(), rawRequest(`GET ${path}`), { idleMs: 3000 });
      statuses.push(answer.status);
      await vi.waitFor(() => expect(lines).toHaveLength(i + 1), { timeout: 3000 });
    }
    expect(statuses).toEqual([200, 502, 502]);
    expect(lines[0]).toMatchObject({ path: '/verified', status: 200, bytes: 'over tls'.length, attempts: 1 });
    expect(lines[0]).not.toHaveProperty('failure');
    expect(lines[1]).toMatchObject({ path: '/misnamed', status: 502, attempts: 1, failure: 'tls-error' });
    expect(lines[2]).toMatchObject({
      path: '/gone',
      endpoint: `127.0.0.1:${refusedPort}`,
      status: 502,
      failure: 'refused',
    });
  });
});
