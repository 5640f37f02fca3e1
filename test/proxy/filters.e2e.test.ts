import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HttpFilter } from '../../src/ir/http-filters.ts';
import { closeAll, type RunningEcho, startEchoes } from '../support/echo.ts';
import { backend, entry, send, simpleTable, startProxy, type TestProxy, to } from './fixtures.ts';

const prefix = (value: string) => ({ kind: 'PathPrefix', value }) as const;

describe('filters', () => {
  let echoes: RunningEcho[];
  let proxy: TestProxy;
  const mirrored: string[] = [];
  const mirror = createServer((req, res) => {
    mirrored.push(`${req.method} ${req.url} ${req.headers.host}`);
    res.end();
  });
  let flakyCalls = 0;
  // Answers 503 twice, then 200.
  const flaky = createServer((_req, res) => {
    flakyCalls++;
    res.statusCode = flakyCalls % 3 === 0 ? 200 : 503;
    res.end(String(flakyCalls));
  });

  beforeAll(async () => {
    echoes = await startEchoes(['main', 'other']);
    await new Promise<void>((r) => mirror.listen(0, '127.0.0.1', r));
    await new Promise<void>((r) => flaky.listen(0, '127.0.0.1', r));
    const echo = backend('echo', [echoes[0]!.port]);
    const other = backend('other', [echoes[1]!.port]);
    const mirrorBackend = backend('mirror', [(mirror.address() as AddressInfo).port]);
    const flakyBackend = backend('flaky', [(flaky.address() as AddressInfo).port]);
    const redirect = (path: string, filter: Omit<Extract<HttpFilter, { kind: 'RequestRedirect' }>, 'kind'>) =>
      entry([], { path: prefix(path), filters: [{ kind: 'RequestRedirect', ...filter }] });
    proxy = await startProxy(
      simpleTable(
        [
          entry([to(echo)], {
            path: prefix('/headers'),
            filters: [
              {
                kind: 'RequestHeaderModifier',
                set: [{ name: 'X-Set', value: 'set-value' }],
                add: [{ name: 'X-Add', value: 'added' }],
                remove: ['x-remove'],
              },
              {
                kind: 'ResponseHeaderModifier',
                set: [{ name: 'X-Resp-Set', value: 'forced' }],
                add: [{ name: 'X-Resp-Add', value: 'extra' }],
                remove: ['X-Resp-Remove'],
              },
            ],
          }),
          redirect('/to-https', { scheme: 'https', statusCode: 301 }),
          redirect('/to-host', { hostname: 'other.example.org', statusCode: 302 }),
          redirect('/to-port', { port: 8443, statusCode: 302 }),
          redirect('/to-full', { path: { kind: 'ReplaceFullPath', value: '/new' }, statusCode: 302 }),
          redirect('/to-prefix', { path: { kind: 'ReplacePrefixMatch', value: '/moved' }, statusCode: 308 }),
          entry([to(echo)], {
            path: prefix('/rewrite-prefix'),
            filters: [
              {
                kind: 'URLRewrite',
                hostname: 'rewritten.example.com',
                path: { kind: 'ReplacePrefixMatch', value: '/inner' },
              },
            ],
          }),
          entry([to(echo)], {
            path: prefix('/strip'),
            filters: [{ kind: 'URLRewrite', path: { kind: 'ReplacePrefixMatch', value: '/' } }],
          }),
          entry([to(echo)], {
            path: prefix('/rewrite-full'),
            filters: [{ kind: 'URLRewrite', path: { kind: 'ReplaceFullPath', value: '/full' } }],
          }),
          entry([to(echo)], {
            path: prefix('/mirror'),
            filters: [{ kind: 'RequestMirror', backendId: mirrorBackend.id, percent: 100 }],
          }),
          entry([to(echo)], {
            path: prefix('/cors'),
            filters: [
              {
                kind: 'CORS',
                allowOrigins: ['https://www.foo.com', 'https://*.bar.com'],
                allowCredentials: true,
                allowMethods: ['GET', 'POST'],
                allowHeaders: ['x-header-1'],
                exposeHeaders: ['x-exposed'],
                maxAgeSeconds: 600,
              },
            ],
          }),
          entry(
            [
              to(echo, 1, [
                {
                  kind: 'RequestHeaderModifier',
                  set: [{ name: 'x-backend', value: 'main' }],
                  add: [],
                  remove: [],
                },
              ]),
            ],
            { path: prefix('/per-backend') },
          ),
          entry([to(flakyBackend)], {
            path: prefix('/retry'),
            retry: { attempts: 2, codes: [503] },
          }),
          entry([to(flakyBackend)], { path: prefix('/no-retry') }),
          entry([to(echo)], { path: prefix('/attempt-timeout'), timeouts: { backendRequestMs: 150 } }),
          entry([to(other)]),
        ],
        [echo, other, mirrorBackend, flakyBackend],
      ),
    );
  });

  afterAll(async () => {
    await proxy.close();
    await closeAll(echoes);
    mirror.close();
    flaky.close();
  });

  it('modifies request headers case-insensitively: set, add, remove', async () => {
    const answer = await send(proxy.port(), '/headers', {
      headers: { 'x-set': 'original', 'X-Add': 'first', 'X-Remove': 'gone' },
    });
    const echo = answer.echo();
    expect(echo.headers['X-Set']).toEqual(['set-value']);
    expect(echo.headers['X-Add']).toEqual(['first,added']);
    expect(echo.headers['X-Remove']).toBeUndefined();
  });

  it('modifies response headers', async () => {
    const answer = await send(proxy.port(), '/headers', {
      headers: { 'x-echo-set-header': 'X-Resp-Set:backend,X-Resp-Remove:x,X-Resp-Add:first' },
    });
    expect(answer.headers['x-resp-set']).toBe('forced');
    expect(answer.headers['x-resp-remove']).toBeUndefined();
    expect(answer.headers['x-resp-add']).toBe('first,extra');
  });

  it('redirects with the listener port semantics of HTTPRequestRedirectFilter', async () => {
    const cases: [string, string, number, string][] = [
      ['/to-https/x?q=1', 'example.com:8080', 301, 'https://example.com/to-https/x?q=1'],
      // No scheme change: the Gateway listener's own port (80 here) is used, and 80 is left out for http.
      ['/to-host', 'example.com:8080', 302, 'http://other.example.org/to-host'],
      ['/to-port', 'example.com', 302, 'http://example.com:8443/to-port'],
      ['/to-full/a', 'example.com', 302, 'http://example.com/new'],
      ['/to-prefix/a/b', 'example.com', 308, 'http://example.com/moved/a/b'],
      ['/to-prefix', 'example.com', 308, 'http://example.com/moved'],
    ];
    for (const [path, host, status, location] of cases) {
      const answer = await send(proxy.port(), path, { host });
      expect({ path, status: answer.status, location: answer.headers.location }).toEqual({
        path,
        status,
        location,
      });
      expect(answer.headers['content-type']).toMatch(/^text\/plain/);
    }
  });

  it('rewrites hostname and path before forwarding, keeping the query', async () => {
    let echo = (await send(proxy.port(), '/rewrite-prefix/a?x=1')).echo();
    expect(echo.host).toBe('rewritten.example.com');
    expect(echo.path).toBe('/inner/a?x=1');
    echo = (await send(proxy.port(), '/strip/three')).echo();
    expect(echo.path).toBe('/three');
    echo = (await send(proxy.port(), '/strip')).echo();
    expect(echo.path).toBe('/');
    echo = (await send(proxy.port(), '/rewrite-full/deep/path?y=2')).echo();
    expect(echo.path).toBe('/full?y=2');
  });

  it('mirrors a copy of the request and answers from the main backend', async () => {
    const answer = await send(proxy.port(), '/mirror/seen?m=1', { host: 'mirror.example.com' });
    expect(answer.echo().pod).toBe('main');
    await expect.poll(() => mirrored).toContain('GET /mirror/seen?m=1 mirror.example.com');
    const post = await send(proxy.port(), '/mirror/body', { method: 'POST', body: 'hello' });
    expect(post.echo().bodyBytes).toBe(5);
    await expect.poll(() => mirrored).toContain('POST /mirror/body example.com');
  });

  it('answers CORS preflights at the gateway and decorates actual responses', async () => {
    const preflight = await send(proxy.port(), '/cors', {
      method: 'OPTIONS',
      headers: {
        origin: 'https://app.bar.com',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'x-header-1',
      },
    });
    expect(preflight.status).toBe(200);
    expect(preflight.headers['access-control-allow-origin']).toBe('https://app.bar.com');
    expect(preflight.headers['access-control-allow-credentials']).toBe('true');
    expect(preflight.headers['access-control-allow-methods']).toBe('GET, POST');
    expect(preflight.headers['access-control-allow-headers']).toBe('x-header-1');
    expect(preflight.headers['access-control-max-age']).toBe('600');
    expect(preflight.headers['content-type']).toBeUndefined();

    const denied = await send(proxy.port(), '/cors', {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.com', 'access-control-request-method': 'GET' },
    });
    expect(denied.headers['access-control-allow-origin']).toBeUndefined();

    const actual = await send(proxy.port(), '/cors', { headers: { origin: 'https://www.foo.com' } });
    expect(actual.echo().pod).toBe('main');
    expect(actual.headers['access-control-allow-origin']).toBe('https://www.foo.com');
    expect(actual.headers['access-control-expose-headers']).toBe('x-exposed');
  });

  it('runs per-backendRef filters', async () => {
    const echo = (await send(proxy.port(), '/per-backend')).echo();
    expect(echo.headers['X-Backend']).toEqual(['main']);
  });

  it('retries on listed codes up to the attempt budget', async () => {
    flakyCalls = 0;
    const answer = await send(proxy.port(), '/retry');
    expect(answer.status).toBe(200);
    expect(answer.text).toBe('3');
    flakyCalls = 0;
    expect((await send(proxy.port(), '/no-retry')).status).toBe(503);
  });

  it('answers 504 when one backend attempt exceeds backendRequest', async () => {
    const answer = await send(proxy.port(), '/attempt-timeout?delay=1s');
    expect(answer.status).toBe(504);
    expect(answer.headers['content-type']).toMatch(/^text\/plain/);
    expect((await send(proxy.port(), '/attempt-timeout')).status).toBe(200);
  });
});
