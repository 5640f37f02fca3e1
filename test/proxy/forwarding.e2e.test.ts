import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeAll, type RunningEcho, startEchoes } from '../support/echo.ts';
import { backend, entry, invalid, send, simpleTable, startProxy, type TestProxy, to } from './fixtures.ts';

/** A port that refuses connections: bound, then closed. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

describe('forwarding', () => {
  let echoes: RunningEcho[];
  let proxy: TestProxy;
  let refused: number;
  // A backend that answers 200 with a large streamed body and reports how many request bytes it read.
  const sink = createServer((req, res) => {
    let received = 0;
    req.on('data', (c: Buffer) => {
      received += c.length;
    });
    req.on('end', () => {
      const size = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('size') ?? '0');
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'x-received': String(received) });
      const chunk = Buffer.alloc(64 * 1024, 120);
      let sent = 0;
      const pump = (): void => {
        while (sent < size) {
          const n = Math.min(chunk.length, size - sent);
          sent += n;
          if (!res.write(n === chunk.length ? chunk : chunk.subarray(0, n))) {
            res.once('drain', pump);
            return;
          }
        }
        res.end();
      };
      pump();
    });
  });
  // A backend that resets the connection without answering.
  const resetter = createServer((req) => req.socket.destroy());
  // A second one: two endpoints of a backend going down together each reset a request.
  const resetter2 = createServer((req) => req.socket.destroy());
  // A backend that never answers and notes when the proxy gives up on the request.
  let hangingClosed = 0;
  const hanging = createServer((req) => {
    req.socket.on('close', () => hangingClosed++);
  });
  // A backend with hop-by-hop headers in its answer.
  const hop = createServer((_req, res) => {
    res.writeHead(200, {
      connection: 'keep-alive, x-private',
      'x-private': 'secret',
      'keep-alive': 'timeout=5',
      'x-public': 'yes',
      'content-type': 'text/plain',
    });
    res.end('ok');
  });

  beforeAll(async () => {
    echoes = await startEchoes(['a', 'b', 'c']);
    await new Promise<void>((r) => sink.listen(0, '127.0.0.1', r));
    await new Promise<void>((r) => resetter.listen(0, '127.0.0.1', r));
    await new Promise<void>((r) => resetter2.listen(0, '127.0.0.1', r));
    await new Promise<void>((r) => hop.listen(0, '127.0.0.1', r));
    await new Promise<void>((r) => hanging.listen(0, '127.0.0.1', r));
    const hangingBackend = backend('hanging', [(hanging.address() as AddressInfo).port]);
    refused = await closedPort();
    const echo = backend('echo', [echoes[0]!.port]);
    const failover = backend('failover', [refused, echoes[1]!.port]);
    const empty = backend('empty', []);
    const dead = backend('dead', [refused]);
    const big = backend('sink', [(sink.address() as AddressInfo).port]);
    const reset = backend('reset', [(resetter.address() as AddressInfo).port]);
    const twoResets = backend('two-resets', [
      (resetter.address() as AddressInfo).port,
      (resetter2.address() as AddressInfo).port,
      echoes[1]!.port,
    ]);
    const hopBackend = backend('hop', [(hop.address() as AddressInfo).port]);
    const split = backend('split', [echoes[2]!.port]);
    proxy = await startProxy(
      simpleTable(
        [
          entry([to(failover)], { path: { kind: 'PathPrefix', value: '/failover' } }),
          entry([to(empty)], { path: { kind: 'PathPrefix', value: '/empty' } }),
          entry([to(dead)], { path: { kind: 'PathPrefix', value: '/dead' } }),
          entry([], { path: { kind: 'PathPrefix', value: '/none' } }),
          entry([invalid()], { path: { kind: 'PathPrefix', value: '/invalid' } }),
          entry([to(big)], { path: { kind: 'PathPrefix', value: '/big' } }),
          entry([to(reset)], { path: { kind: 'PathPrefix', value: '/reset' } }),
          entry([to(twoResets)], { path: { kind: 'PathPrefix', value: '/two-resets' } }),
          entry([to(hopBackend)], { path: { kind: 'PathPrefix', value: '/hop' } }),
          entry([to(hangingBackend)], { path: { kind: 'PathPrefix', value: '/hang' } }),
          entry([to(echo)], {
            path: { kind: 'PathPrefix', value: '/slow' },
            timeouts: { requestMs: 200 },
          }),
          entry([to(echo, 3), to(split, 1), invalid(0)], { path: { kind: 'PathPrefix', value: '/weights' } }),
          entry([to(echo, 1), invalid(1)], { path: { kind: 'PathPrefix', value: '/half-invalid' } }),
          entry([to(echo)]),
        ],
        [echo, failover, empty, dead, big, reset, twoResets, hopBackend, split, hangingBackend],
      ),
    );
  });

  afterAll(async () => {
    await proxy.close();
    await closeAll(echoes);
    sink.close();
    resetter.close();
    resetter2.close();
    hop.close();
    hanging.closeAllConnections();
    hanging.close();
  });

  it('preserves Host with its port and the raw query; the path goes out normalized (docs/paths.md)', async () => {
    const answer = await send(proxy.port(), '/a/%2e%2E/b//c%3f?x=1&x=%20&y=/../%2e', {
      host: 'Example.com:8080',
    });
    expect(answer.status).toBe(200);
    const echo = answer.echo();
    expect(echo.host).toBe('Example.com:8080');
    expect(echo.path).toBe('/b/c%3F?x=1&x=%20&y=/../%2e');
  });

  it('appends X-Forwarded-For and sets X-Forwarded-Proto and -Host', async () => {
    const echo = (
      await send(proxy.port(), '/', { host: 'example.com:81', headers: { 'x-forwarded-for': '10.0.0.1' } })
    ).echo();
    expect(echo.headers['X-Forwarded-For']).toEqual(['10.0.0.1, 127.0.0.1']);
    expect(echo.headers['X-Forwarded-Proto']).toEqual(['http']);
    expect(echo.headers['X-Forwarded-Host']).toEqual(['example.com:81']);
  });

  it('removes hop-by-hop headers and the ones Connection lists, both ways', async () => {
    const echo = (
      await send(proxy.port(), '/', {
        headers: {
          connection: 'keep-alive, x-drop-me',
          'x-drop-me': '1',
          'keep-alive': 'timeout=5',
          te: 'trailers',
          'proxy-authorization': 'Basic xyz',
          'x-keep-me': '1',
        },
      })
    ).echo();
    const names = Object.keys(echo.headers);
    for (const name of ['X-Drop-Me', 'Keep-Alive', 'Te', 'Proxy-Authorization'])
      expect(names).not.toContain(name);
    expect(echo.headers['X-Keep-Me']).toEqual(['1']);

    const answer = await send(proxy.port(), '/hop');
    expect(answer.status).toBe(200);
    expect(answer.headers['x-public']).toBe('yes');
    expect(answer.headers['x-private']).toBeUndefined();
    expect(answer.headers['keep-alive']).toBeUndefined();
  });

  it('streams 5 MiB request and response bodies', async () => {
    const size = 5 * 1024 * 1024;
    const answer = await send(proxy.port(), `/big?size=${size}`, {
      method: 'POST',
      body: Buffer.alloc(size, 97),
    });
    expect(answer.status).toBe(200);
    expect(answer.headers['x-received']).toBe(String(size));
    expect(answer.bytes).toBe(size);
  });

  it('streams a chunked request body of unknown length', async () => {
    const port = proxy.port();
    const received = await new Promise<string>((resolve, reject) => {
      const req = httpRequest(
        { host: '127.0.0.1', port, path: '/big?size=10', method: 'PUT', agent: false },
        (res) => {
          res.resume();
          resolve(String(res.headers['x-received']));
        },
      );
      req.on('error', reject);
      for (let i = 0; i < 10; i++) req.write(Buffer.alloc(1000, 98));
      req.end();
    });
    expect(received).toBe('10000');
  });

  it('moves to another endpoint when a connection is refused, unseen by the client', async () => {
    for (let i = 0; i < 6; i++) {
      const answer = await send(proxy.port(), '/failover');
      expect(answer.status).toBe(200);
      expect(answer.echo().pod).toBe('b');
    }
  });

  it('maps failures: 500 invalid or no backends, 503 no endpoints, 502 refused or reset', async () => {
    const cases: [string, number][] = [
      ['/none', 500],
      ['/invalid', 500],
      ['/empty', 503],
      ['/dead', 502],
      ['/reset', 502],
    ];
    for (const [path, status] of cases) {
      const answer = await send(proxy.port(), path);
      expect({ path, status: answer.status }).toEqual({ path, status });
      expect(answer.headers['content-type']).toMatch(/^text\/plain/);
    }
  });

  it('a request reset by two endpoints in turn is answered by the third, never a 502', async () => {
    // Each endpoint that resets a request is skipped for it; one reset per request used to be all it got.
    const statuses = [];
    for (let i = 0; i < 30; i++) statuses.push((await send(proxy.port(), '/two-resets')).status);
    expect(statuses).toEqual(Array.from({ length: 30 }, () => 200));
  });

  it('answers 504 when the route request timeout passes', async () => {
    const answer = await send(proxy.port(), '/slow?delay=2s');
    expect(answer.status).toBe(504);
    expect(answer.headers['content-type']).toMatch(/^text\/plain/);
    expect((await send(proxy.port(), '/slow')).status).toBe(200);
  });

  it('splits traffic by weight; weight 0 gets nothing, an invalid share answers 500', async () => {
    const counts = new Map<string, number>();
    for (let i = 0; i < 200; i++) {
      const answer = await send(proxy.port(), '/weights');
      const key = answer.status === 200 ? answer.echo().pod : String(answer.status);
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    expect([...counts.keys()].sort()).toEqual(['a', 'c']);
    expect(counts.get('a')!).toBeGreaterThan(120);
    expect(counts.get('a')!).toBeLessThan(180);

    let errors = 0;
    for (let i = 0; i < 100; i++) if ((await send(proxy.port(), '/half-invalid')).status === 500) errors++;
    expect(errors).toBeGreaterThan(25);
    expect(errors).toBeLessThan(75);
  });

  it('counts requests by gateway, route, backend and code', async () => {
    await send(proxy.port(), '/');
    const text = await proxy.registry.metrics();
    expect(text).toMatch(
      /clusterset_gateway_requests_total\{gateway="default\/gw",route="default\/route",backend="Service\/default\/echo:80",code="200"\} \d+/,
    );
    expect(text).toMatch(
      /clusterset_gateway_upstream_requests_total\{[^}]*result="connect-failure"[^}]*\} \d+/,
    );
    expect(text).not.toMatch(/"\/(failover|weights)/);
    expect(text).toContain('# TYPE clusterset_gateway_request_duration_seconds histogram');
    expect(text).toMatch(
      /clusterset_gateway_request_duration_seconds_bucket\{le="\+Inf",gateway="default\/gw",route="default\/route",backend="Service\/default\/echo:80"\} [1-9]\d*/,
    );
    expect(text).toMatch(
      /clusterset_gateway_upstream_request_duration_seconds_count\{backend="Service\/default\/failover:80",cluster="cluster-a",zone="zone-a"\} [1-9]/,
    );
  });

  it('cancels the upstream request when the client goes away, and keeps serving', async () => {
    const port = proxy.port();
    const socket = connect(port, '127.0.0.1', () => {
      socket.write('GET /hang HTTP/1.1\r\nHost: example.com\r\n\r\n');
    });
    await expect.poll(() => new Promise((r) => hanging.getConnections((_e, n) => r(n)))).toBe(1);
    socket.destroy();
    await expect.poll(() => hangingClosed).toBe(1);
    expect((await send(port, '/')).status).toBe(200);
  });
});
