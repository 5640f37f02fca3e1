import { connect as connectH2 } from 'node:http2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EchoResponse } from '../../src/demo/echo/echo-server.ts';
import type { RouteTable } from '../../src/ir/route-table.ts';
import type { PathNormalization } from '../../src/proxy/exchange/path-normalization.ts';
import { rawExchange } from '../hostile/raw-client.ts';
import { closeAll, type RunningEcho, startEchoes } from '../support/echo.ts';
import { backend, entry, send, simpleTable, startProxy, type TestProxy, to } from './fixtures.ts';

/**
 * Paths are normalized before matching and forwarded normalized: each row is a real request through the
 * gateway, and the echo backend says which route took it (its pod) and the path it received.
 */
interface PathCase {
  readonly sent: string;
  /** The backend that answered and the path it got; or the gateway's own status. */
  readonly routed: { readonly pod: 'public' | 'admin' | 'root'; readonly path: string } | number;
  /** Body of a gateway 400. */
  readonly reason?: string;
}

const DEFAULT_CASES: readonly PathCase[] = [
  { sent: '/public/page', routed: { pod: 'public', path: '/public/page' } },
  // RFC 3986 §5.2.4 dot segments, also percent-encoded, also above the root.
  { sent: '/public/../admin', routed: { pod: 'admin', path: '/admin' } },
  { sent: '/public/%2e%2e/admin', routed: { pod: 'admin', path: '/admin' } },
  { sent: '/public/%2E%2E/admin/x', routed: { pod: 'admin', path: '/admin/x' } },
  { sent: '/public/./page', routed: { pod: 'public', path: '/public/page' } },
  { sent: '/./public', routed: { pod: 'public', path: '/public' } },
  { sent: '/../../admin', routed: { pod: 'admin', path: '/admin' } },
  { sent: '/public/a/b/..', routed: { pod: 'public', path: '/public/a/' } },
  { sent: '/admin/..', routed: { pod: 'root', path: '/' } },
  // Merged slashes.
  { sent: '//admin', routed: { pod: 'admin', path: '/admin' } },
  { sent: '/public//page///x', routed: { pod: 'public', path: '/public/page/x' } },
  { sent: '//', routed: { pod: 'root', path: '/' } },
  // Unreserved characters decoded, other encodings kept with upper-case hex.
  { sent: '/%61dmin', routed: { pod: 'admin', path: '/admin' } },
  { sent: '/public/%7euser', routed: { pod: 'public', path: '/public/~user' } },
  { sent: '/public/caf%c3%a9', routed: { pod: 'public', path: '/public/caf%C3%A9' } },
  { sent: '/public/a%20b', routed: { pod: 'public', path: '/public/a%20b' } },
  // Escaped slashes, backslashes and NUL are kept encoded by default: no new segment appears.
  { sent: '/public/..%2fadmin', routed: { pod: 'public', path: '/public/..%2Fadmin' } },
  { sent: '/public/%2e%2e%2fadmin', routed: { pod: 'public', path: '/public/..%2Fadmin' } },
  { sent: '/%2e%2e%2f', routed: { pod: 'root', path: '/..%2F' } },
  { sent: '/public/a%5cb', routed: { pod: 'public', path: '/public/a%5Cb' } },
  { sent: '/public/a%00b', routed: { pod: 'public', path: '/public/a%00b' } },
  // A raw backslash is a slash (as Envoy's normalize_path): `\..\` is a dot segment.
  { sent: '/public\\..\\admin', routed: { pod: 'admin', path: '/admin' } },
  // The query string is never touched.
  { sent: '/public/../admin?x=/../%2e&y=%61', routed: { pod: 'admin', path: '/admin?x=/../%2e&y=%61' } },
  // A malformed escape is left as it is.
  { sent: '/public/%zz', routed: { pod: 'public', path: '/public/%zz' } },
  // Refused: a dot segment with a servlet path parameter, overlong UTF-8 for `.` and `/`.
  { sent: '/public/..;/admin', routed: 400, reason: 'dot segment with a parameter in path' },
  { sent: '/public/.;x/admin', routed: 400, reason: 'dot segment with a parameter in path' },
  { sent: '/public/%2e%2e;/admin', routed: 400, reason: 'dot segment with a parameter in path' },
  { sent: '/public/%c0%ae%c0%ae/admin', routed: 400, reason: 'overlong utf-8 in path' },
  { sent: '/public/%c0%af', routed: 400, reason: 'overlong utf-8 in path' },
  { sent: '/public/%e0%80%ae', routed: 400, reason: 'overlong utf-8 in path' },
  // `..;x` is not a dot segment when more follows the dot-dot.
  { sent: '/public/..x;/y', routed: { pod: 'public', path: '/public/..x;/y' } },
];

function table(echoes: readonly RunningEcho[]): RouteTable {
  const [publicEcho, adminEcho, rootEcho] = echoes;
  const publicBackend = backend('public', [publicEcho!.port]);
  const adminBackend = backend('admin', [adminEcho!.port]);
  const rootBackend = backend('root', [rootEcho!.port]);
  return simpleTable(
    [
      entry([to(publicBackend)], { route: 'default/public', path: { kind: 'PathPrefix', value: '/public' } }),
      entry([to(adminBackend)], { route: 'default/admin', path: { kind: 'PathPrefix', value: '/admin' } }),
      entry([to(rootBackend)], { route: 'default/root', path: { kind: 'Exact', value: '/' } }),
      entry([to(rootBackend)], { route: 'default/dots', path: { kind: 'Exact', value: '/..%2F' } }),
      entry([to(rootBackend)], {
        route: 'default/old',
        path: { kind: 'PathPrefix', value: '/old' },
        filters: [
          {
            kind: 'RequestRedirect',
            path: { kind: 'ReplacePrefixMatch', value: '/new' },
            statusCode: 302,
          },
        ],
      }),
      entry([to(rootBackend)], {
        route: 'default/rewrite',
        path: { kind: 'PathPrefix', value: '/v1' },
        filters: [{ kind: 'URLRewrite', path: { kind: 'ReplacePrefixMatch', value: '/api' } }],
      }),
    ],
    [publicBackend, adminBackend, rootBackend],
  );
}

async function startWith(echoes: readonly RunningEcho[], paths?: PathNormalization): Promise<TestProxy> {
  return startProxy(table(echoes), undefined, paths === undefined ? {} : { paths });
}

function expectRouted(
  answer: { status: number; text: string; echo(): EchoResponse },
  { routed, reason }: PathCase,
): void {
  if (typeof routed === 'number') {
    expect(answer.status, answer.text).toBe(routed);
    if (reason !== undefined) expect(answer.text).toBe(`${reason}\n`);
    return;
  }
  expect(answer.status, answer.text).toBe(200);
  const echo = answer.echo();
  expect({ pod: echo.pod, path: echo.path }).toEqual(routed);
}

describe('path normalization before matching (defaults)', () => {
  let echoes: RunningEcho[];
  let proxy: TestProxy;

  beforeAll(async () => {
    echoes = await startEchoes(['public', 'admin', 'root']);
    proxy = await startWith(echoes);
  });
  afterAll(async () => {
    await proxy.close();
    await closeAll(echoes);
  });

  it.each(DEFAULT_CASES)('HTTP/1.1 $sent', async (row) => {
    expectRouted(await send(proxy.port(), row.sent), row);
  });

  it.each(DEFAULT_CASES)('HTTP/2 $sent', async (row) => {
    const session = connectH2(`http://127.0.0.1:${proxy.port()}`);
    try {
      const answer = await new Promise<{ status: number; text: string; echo(): EchoResponse }>(
        (resolve, reject) => {
          const stream = session.request({ ':path': row.sent, ':authority': 'example.com' });
          let status = 0;
          let text = '';
          stream.on('response', (headers) => (status = Number(headers[':status'])));
          stream.setEncoding('utf8');
          stream.on('data', (c: string) => (text += c));
          stream.on('end', () => resolve({ status, text, echo: () => JSON.parse(text) as EchoResponse }));
          stream.on('error', reject);
          stream.end();
        },
      );
      expectRouted(answer, row);
    } finally {
      session.close();
    }
  });

  it('a bad path costs only its request: the connection keeps serving', async () => {
    const answer = await rawExchange(
      proxy.port(),
      'GET /public/..;/admin HTTP/1.1\r\nHost: example.com\r\n\r\nGET //admin HTTP/1.1\r\nHost: example.com\r\n\r\n',
      { idleMs: 500 },
    );
    expect(answer.status).toBe(400);
    expect(answer.raw).toMatch(/HTTP\/1\.1 200 OK[\s\S]*"path": "\/admin"/);
  });

  it('redirects and rewrites start from the normalized path', async () => {
    const redirected = await send(proxy.port(), '/x/..//old//a/./b?q=%2e');
    expect(redirected.status).toBe(302);
    expect(redirected.headers.location).toBe('http://example.com/new/a/b?q=%2e');
    const rewritten = await send(proxy.port(), '/public/../v1//users/%7eme');
    expect(rewritten.status).toBe(200);
    expect(rewritten.echo().path).toBe('/api/users/~me');
  });
});

describe('path normalization flags', () => {
  let echoes: RunningEcho[];
  const proxies: TestProxy[] = [];

  beforeAll(async () => {
    echoes = await startEchoes(['public', 'admin', 'root']);
  });
  afterAll(async () => {
    await Promise.all(proxies.map((p) => p.close()));
    await closeAll(echoes);
  });

  async function proxyWith(paths: Partial<PathNormalization>): Promise<TestProxy> {
    const proxy = await startWith(echoes, {
      normalize: true,
      mergeSlashes: true,
      escapedSlashes: 'keep',
      ...paths,
    });
    proxies.push(proxy);
    return proxy;
  }

  it('--path-escaped-slashes-action reject: %2F, %5C and %00 are 400', async () => {
    const proxy = await proxyWith({ escapedSlashes: 'reject' });
    for (const path of ['/public/a%2fb', '/public/a%5Cb', '/public/a%00b']) {
      const answer = await send(proxy.port(), path);
      expect(answer.status, path).toBe(400);
      expect(answer.text).toBe('escaped slash or NUL in path\n');
    }
    expectRouted(await send(proxy.port(), '/public/a%20b'), {
      sent: '',
      routed: { pod: 'public', path: '/public/a%20b' },
    });
  });

  it('unescape-and-redirect: 307 to the decoded, normalized path with the query kept', async () => {
    const proxy = await proxyWith({ escapedSlashes: 'unescape-and-redirect' });
    const answer = await send(proxy.port(), '/public/..%2Fadmin%5cx?a=%2F');
    expect(answer.status).toBe(307);
    expect(answer.headers.location).toBe('/admin/x?a=%2F');
    // Without an escaped slash nothing is redirected.
    expectRouted(await send(proxy.port(), '/public/../admin'), {
      sent: '',
      routed: { pod: 'admin', path: '/admin' },
    });
    // %00 is never decoded.
    expectRouted(await send(proxy.port(), '/public/a%00'), {
      sent: '',
      routed: { pod: 'public', path: '/public/a%00' },
    });
  });

  it('unescape-and-forward: decoded, normalized and routed by the result', async () => {
    const proxy = await proxyWith({ escapedSlashes: 'unescape-and-forward' });
    expectRouted(await send(proxy.port(), '/public/..%2Fadmin'), {
      sent: '',
      routed: { pod: 'admin', path: '/admin' },
    });
  });

  it('--no-normalize-path: dot segments and encodings as received; slashes still merged', async () => {
    const proxy = await proxyWith({ normalize: false });
    expectRouted(await send(proxy.port(), '/public/../admin'), {
      sent: '',
      routed: { pod: 'public', path: '/public/../admin' },
    });
    expectRouted(await send(proxy.port(), '/public/%7e//x'), {
      sent: '',
      routed: { pod: 'public', path: '/public/%7e/x' },
    });
    expect((await send(proxy.port(), '/%61dmin')).status).toBe(404);
  });

  it('--no-merge-slashes: repeated slashes kept, dot segments still removed', async () => {
    const proxy = await proxyWith({ mergeSlashes: false });
    expect((await send(proxy.port(), '//admin')).status).toBe(404);
    expectRouted(await send(proxy.port(), '/public//a/../b'), {
      sent: '',
      routed: { pod: 'public', path: '/public//b' },
    });
  });
});
