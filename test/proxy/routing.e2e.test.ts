import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BackendCluster, RouteTable } from '../../src/ir/route-table.ts';
import { closeAll, type RunningEcho, startEchoes } from '../support/echo.ts';
import {
  backend,
  entry,
  httpPort,
  listener,
  send,
  startProxy,
  type TestProxy,
  to,
  vhost,
} from './fixtures.ts';

describe('route selection', () => {
  let echoes: RunningEcho[];
  let proxy: TestProxy;
  const b: Record<string, BackendCluster> = {};

  beforeAll(async () => {
    const names = [
      'exact',
      'wild',
      'any',
      'foo',
      'root',
      'exactpath',
      'hdr',
      'query',
      'post',
      'regex',
      'other',
    ];
    echoes = await startEchoes(names.map((n) => ({ pod: n, service: n })));
    for (const [i, n] of names.entries()) b[n] = backend(n, [echoes[i]!.port]);
    const table: RouteTable = {
      ports: [
        httpPort(80, [
          // Listener isolation: exact listener first, then the wildcard, then the catch-all.
          listener('exact', 'exact.example.com', [vhost('exact.example.com', [entry([to(b.exact!)])])]),
          listener('wild', '*.example.com', [vhost('*.example.com', [entry([to(b.wild!)])])]),
          listener('any', undefined, [
            vhost('only.example.org', [entry([to(b.other!)])]),
            vhost('*', [
              entry([to(b.exactpath!)], { path: { kind: 'Exact', value: '/exact' } }),
              entry([to(b.hdr!)], {
                path: { kind: 'PathPrefix', value: '/m' },
                headers: [{ kind: 'Exact', name: 'x-version', value: 'two' }],
              }),
              entry([to(b.query!)], {
                path: { kind: 'PathPrefix', value: '/m' },
                queryParams: [{ kind: 'Exact', name: 'v', value: 'q' }],
              }),
              entry([to(b.post!)], { path: { kind: 'PathPrefix', value: '/m' }, method: 'POST' }),
              entry([to(b.regex!)], { path: { kind: 'RegularExpression', value: '/re/[0-9]+' } }),
              entry([to(b.foo!)], { path: { kind: 'PathPrefix', value: '/foo' } }),
              entry([to(b.root!)], { path: { kind: 'PathPrefix', value: '/' } }),
            ]),
          ]),
        ]),
        httpPort(8080, [
          listener('strict', 'strict.example.com', [
            vhost('strict.example.com', [entry([to(b.exact!)], { path: { kind: 'Exact', value: '/only' } })]),
          ]),
        ]),
      ],
      backends: Object.fromEntries(Object.values(b).map((c) => [c.id, c])),
    };
    proxy = await startProxy(table);
  });

  afterAll(async () => {
    await proxy.close();
    await closeAll(echoes);
  });

  const served = async (path: string, host = 'example.net', extra: Parameters<typeof send>[2] = {}) => {
    const answer = await send(proxy.port(), path, { host, ...extra });
    expect(answer.status).toBe(200);
    return answer.echo().service;
  };

  it('selects the listener by Host: exact, then wildcard, then catch-all, ignoring the port', async () => {
    expect(await served('/', 'exact.example.com')).toBe('exact');
    expect(await served('/', 'EXACT.example.com:8080')).toBe('exact');
    expect(await served('/', 'a.example.com')).toBe('wild');
    expect(await served('/', 'a.b.example.com')).toBe('wild');
    expect(await served('/', 'example.com')).toBe('root');
    expect(await served('/', 'only.example.org')).toBe('other');
  });

  it('applies PathPrefix element by element and Exact literally', async () => {
    expect(await served('/foo')).toBe('foo');
    expect(await served('/foo/')).toBe('foo');
    expect(await served('/foo/bar')).toBe('foo');
    expect(await served('/foobar')).toBe('root');
    expect(await served('/exact')).toBe('exactpath');
    expect(await served('/exact/')).toBe('root');
    expect(await served('/exact?x=1')).toBe('exactpath');
  });

  it('matches headers, query parameters and methods in IR precedence order', async () => {
    expect(await served('/m', 'example.net', { headers: { 'X-Version': 'two' } })).toBe('hdr');
    expect(await served('/m?v=q')).toBe('query');
    expect(await served('/m?v=q', 'example.net', { headers: { 'x-version': 'two' } })).toBe('hdr');
    expect(await served('/m', 'example.net', { method: 'POST' })).toBe('post');
    expect(await served('/m?v=other')).toBe('root');
    expect(await served('/m/x', 'example.net', { headers: { 'x-version': 'one' } })).toBe('root');
  });

  it('matches regular expressions against the whole path', async () => {
    expect(await served('/re/123')).toBe('regex');
    expect(await served('/re/123x')).toBe('root');
  });

  it('answers 404 in text/plain when no listener, virtual host or route matches', async () => {
    const noRoute = await send(proxy.port(8080), '/other', { host: 'strict.example.com' });
    expect(noRoute.status).toBe(404);
    expect(noRoute.headers['content-type']).toMatch(/^text\/plain/);
    const noListener = await send(proxy.port(8080), '/only', { host: 'elsewhere.example.com' });
    expect(noListener.status).toBe(404);
    expect((await send(proxy.port(8080), '/only', { host: 'strict.example.com' })).status).toBe(200);
  });

  it('routes an absolute-form target by its authority and forwards the origin form', async () => {
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = connect(proxy.port(), '127.0.0.1', () => {
        socket.write(
          'GET http://exact.example.com/abc?x=1 HTTP/1.1\r\nHost: ignored.example.net\r\nConnection: close\r\n\r\n',
        );
      });
      let text = '';
      socket.on('data', (c: Buffer) => {
        text += c.toString();
      });
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    const echo = JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4)) as {
      service: string;
      path: string;
      host: string;
    };
    expect(echo).toMatchObject({ service: 'exact', path: '/abc?x=1', host: 'exact.example.com' });
  });

  it('answers 400 to a malformed Host header', async () => {
    const answer = await send(proxy.port(), '/', { host: 'bad host!' });
    expect(answer.status).toBe(400);
    expect(answer.headers['content-type']).toMatch(/^text\/plain/);
  });
});
