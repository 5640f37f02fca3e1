import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { constants, type Http2Server } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HttpFilter } from '../../src/ir/http-filters.ts';
import type { RouteTable } from '../../src/ir/route-table.ts';
import { selfSignedCertificate } from '../../src/net/self-signed-certificate.ts';
import { backend, entry, invalid, listener, startProxy, type TestProxy, to, vhost } from './fixtures.ts';
import {
  type H2Call,
  h2Call,
  openSession,
  startH2cBackend,
  startHttp1Backend,
} from './lean-http2-fixtures.ts';

const GRPC = { 'content-type': 'application/grpc', te: 'trailers' };
const CORS: HttpFilter = {
  kind: 'CORS',
  allowOrigins: ['https://app.example'],
  allowCredentials: false,
  allowMethods: ['GET', 'POST'],
  allowHeaders: ['x-a'],
  exposeHeaders: ['x-b'],
  maxAgeSeconds: 60,
};

/** Requests whose answers must not differ between the lean path and Node's compatibility layer. */
interface Want {
  readonly status: number;
  /** Over TLS, when it differs (another host than the SNI name's: 421). */
  readonly tlsStatus?: number;
  readonly bytes?: number;
  /** A trailer or Trailers-Only header the answer must carry. */
  readonly trailer?: string;
  readonly grpcStatus?: string;
}

const CALLS: readonly (H2Call & { readonly name: string; readonly want?: Want })[] = [
  {
    name: 'GET to HTTP/1.1',
    path: '/h1/echo?q=1',
    headers: { 'user-agent': 't', 'x-forwarded-for': '10.0.0.1' },
  },
  { name: 'HEAD', method: 'HEAD', path: '/h1/echo' },
  { name: 'POST body', method: 'POST', path: '/h1/echo', body: 'hello' },
  { name: 'large POST body', method: 'POST', path: '/h1/echo', body: Buffer.alloc(3_000_000, 'y') },
  { name: 'large response', path: '/h1/big', want: { status: 200, bytes: 1_048_576 } },
  { name: '204', path: '/h1/empty' },
  {
    name: 'HTTP/1.1 trailers',
    path: '/h1/trailers',
    headers: { te: 'trailers' },
    want: { status: 200, trailer: 'x-checksum' },
  },
  { name: 'invalid backend (500)', path: '/invalid', want: { status: 500 } },
  {
    name: 'unknown host (404; over TLS misdirected, 421)',
    path: '/',
    authority: 'nowhere.example',
    want: { status: 404, tlsStatus: 421 },
  },
  { name: 'normalized path redirect', path: '/h1/a/%2e%2e/b' },
  { name: 'redirect', path: '/redirect/x' },
  {
    name: 'CORS preflight',
    method: 'OPTIONS',
    path: '/cors',
    headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' },
  },
  { name: 'CORS simple', path: '/cors', headers: { origin: 'https://app.example' } },
  {
    name: 'upstream reset mid-body (HTTP/1.1)',
    want: { status: 502 },
    method: 'POST',
    path: '/h1/reset-mid-body',
    body: Buffer.alloc(200_000, 'z'),
  },
  {
    name: 'gRPC unary',
    want: { status: 200, bytes: 8, grpcStatus: '0' },
    method: 'POST',
    path: '/pkg.Svc/Echo',
    headers: GRPC,
    body: Buffer.from([0, 0, 0, 0, 3, 1, 2, 3]),
  },
  {
    name: 'gRPC large body (flow control)',
    want: { status: 200, bytes: 2_000_000, grpcStatus: '0' },
    method: 'POST',
    path: '/pkg.Svc/Echo',
    headers: GRPC,
    body: Buffer.alloc(2_000_000, 5),
  },
  {
    name: 'gRPC Trailers-Only',
    want: { status: 200, grpcStatus: '5' },
    method: 'POST',
    path: '/pkg.Svc/TrailersOnly',
    headers: GRPC,
    body: Buffer.alloc(5),
  },
  {
    name: 'gRPC upstream reset',
    want: { status: 200, grpcStatus: '14' },
    method: 'POST',
    path: '/pkg.Svc/Reset',
    headers: GRPC,
    body: Buffer.alloc(5),
  },
  {
    name: 'gRPC unknown method (local reply)',
    want: { status: 200, grpcStatus: '12' },
    method: 'POST',
    path: '/other.Svc/X',
    headers: GRPC,
    body: Buffer.alloc(5),
  },
  {
    name: 'gRPC timeout',
    want: { status: 200, grpcStatus: '4' },
    method: 'POST',
    path: '/pkg.Svc/Hang',
    headers: { ...GRPC, 'grpc-timeout': '100m' },
    body: Buffer.alloc(5),
  },
];

function table(h1Port: number, h2cPort: number, cert: string, key: string): RouteTable {
  const h1 = backend('h1', [h1Port]);
  const grpc = backend('grpc', [h2cPort], 'h2c');
  const routes = [
    entry([invalid()], { route: 'default/invalid', path: { kind: 'PathPrefix', value: '/invalid' } }),
    entry([to(h1)], { route: 'default/h1', path: { kind: 'PathPrefix', value: '/h1' } }),
    entry([to(h1)], { route: 'default/cors', path: { kind: 'PathPrefix', value: '/cors' }, filters: [CORS] }),
    entry([to(h1)], {
      route: 'default/redirect',
      path: { kind: 'PathPrefix', value: '/redirect' },
      filters: [{ kind: 'RequestRedirect', hostname: 'other.example', statusCode: 302 }],
    }),
    entry([to(grpc)], { route: 'default/grpc', path: { kind: 'PathPrefix', value: '/pkg.Svc/' } }),
  ];
  const tls = { certificates: [{ secret: 'default/tls', certPem: cert, keyPem: key }] };
  return {
    ports: [
      {
        port: 80,
        protocol: 'HTTP',
        gateways: ['default/gw'],
        listeners: [listener('http', undefined, [vhost('example.com', routes)])],
      },
      {
        port: 443,
        protocol: 'HTTPS',
        gateways: ['default/gw'],
        listeners: [listener('https', 'example.com', [vhost('example.com', routes)], { tls })],
      },
    ],
    backends: { [h1.id]: h1, [grpc.id]: grpc },
  };
}

describe('lean HTTP/2 server path (against --no-lean-http2)', () => {
  let dir: string;
  let ca: string;
  let h1: Server;
  let h2c: Http2Server;
  let lean: TestProxy;
  let compat: TestProxy;
  /** The lean path on the project's own codec (`--http2-codec js`): its answers must equal the lean path's. */
  let js: TestProxy;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'csg-lean-h2-'));
    const pair = selfSignedCertificate({
      dir,
      name: 'tls',
      commonName: 'example.com',
      subjectAltNames: ['DNS:example.com'],
      days: 1,
    });
    ca = pair.cert;
    [h1, h2c] = await Promise.all([startHttp1Backend(), startH2cBackend()]);
    const routes = table(
      (h1.address() as AddressInfo).port,
      (h2c.address() as AddressInfo).port,
      pair.cert,
      pair.key,
    );
    lean = await startProxy(routes, undefined, { leanHttp2: true });
    compat = await startProxy(routes, undefined, { leanHttp2: false });
    js = await startProxy(routes, undefined, { leanHttp2: true, http2Codec: 'js' });
  });
  afterAll(async () => {
    await Promise.all([lean?.close(), compat?.close(), js?.close()]);
    await Promise.all([new Promise((r) => h1?.close(r)), new Promise((r) => h2c?.close(r))]);
    rmSync(dir, { recursive: true, force: true });
  });

  const transports = [
    { transport: 'h2c', url: (p: TestProxy) => `http://127.0.0.1:${p.port(80)}`, tls: false },
    { transport: 'h2 over TLS', url: (p: TestProxy) => `https://127.0.0.1:${p.port(443)}`, tls: true },
  ];
  const cases = transports.flatMap((t) =>
    CALLS.map((c) => ({ ...t, call: c, name: `${t.transport}: ${c.name}` })),
  );

  it.each(cases)(
    'answers as the compatibility layer does, on both codecs: $name',
    async ({ url, tls, call }) => {
      const [a, b, c] = await Promise.all(
        [lean, compat, js].map(async (proxy) => {
          const session = await openSession(url(proxy), tls ? ca : undefined);
          try {
            return await h2Call(session, call);
          } finally {
            session.destroy();
          }
        }),
      );
      expect(a!.status).toBeGreaterThan(0);
      expect(a).toEqual(b);
      expect(c).toEqual(a);
      const want = call.want;
      if (want !== undefined) {
        expect(a!.status).toBe(tls ? (want.tlsStatus ?? want.status) : want.status);
        if (want.bytes !== undefined) expect(a!.bytes).toBe(want.bytes);
        if (want.trailer !== undefined) expect(a!.trailers).toContain(want.trailer);
        if (want.grpcStatus !== undefined) {
          const fields = [...a!.head, ...a!.trailers];
          expect(fields[fields.indexOf('grpc-status') + 1]).toBe(want.grpcStatus);
        }
      }
    },
  );

  it.each(transports)(
    '$transport: trailers go only to a client that announced te: trailers (the compatibility layer sends them anyway)',
    async ({ url, tls }) => {
      const [a, b, c] = await Promise.all(
        [lean, compat, js].map(async (proxy) => {
          const session = await openSession(url(proxy), tls ? ca : undefined);
          try {
            return await h2Call(session, { path: '/h1/trailers' });
          } finally {
            session.destroy();
          }
        }),
      );
      expect(a!.trailers).toEqual([]);
      expect(b!.trailers).toEqual(['x-checksum', 'abc']);
      expect({ ...a, trailers: [] }).toEqual({ ...b, trailers: [] });
      expect(c).toEqual(a);
    },
  );

  it.each(transports)(
    '$transport: a client reset mid-body cancels the upstream stream, and the session serves on',
    async ({ url, tls }) => {
      for (const proxy of [lean, compat, js]) {
        const session = await openSession(url(proxy), tls ? ca : undefined);
        const stream = session.request({
          ':method': 'POST',
          ':path': '/pkg.Svc/Echo',
          ':authority': 'example.com',
          ...GRPC,
        });
        stream.on('error', () => {});
        const echoed = new Promise<void>((r) => stream.once('data', () => r()));
        stream.on('response', () => {});
        stream.write(Buffer.alloc(10, 1));
        await echoed;
        stream.close(constants.NGHTTP2_CANCEL);
        await new Promise((r) => stream.once('close', r));
        const next = await h2Call(session, {
          method: 'POST',
          path: '/pkg.Svc/Echo',
          headers: GRPC,
          body: Buffer.alloc(7),
        });
        expect(next.trailers).toEqual(['grpc-status', '0', 'grpc-message', 'got 7 bytes']);
        session.destroy();
      }
    },
  );
});
