import {
  type ClientHttp2Session,
  connect as connectH2,
  constants,
  createServer as createH2Server,
  type Http2Server,
  type Http2Session,
  type IncomingHttpHeaders,
  type ServerHttp2Session,
  type ServerHttp2Stream,
} from 'node:http2';
import { type AddressInfo, createServer as createTcpServer, type Server, type Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  CLIENT_PREFACE,
  encodeData,
  encodeHeaders,
  encodeSettings,
  Flag,
  FrameReader,
  FrameType,
} from '../../src/net/http2/frames.ts';
import { HpackEncoder } from '../../src/net/http2/hpack.ts';
import type { RetryReason } from '../../src/proxy/upstream/connection-retry.ts';
import type { Http2Codec } from '../../src/proxy/upstream/upstream-pools.ts';
import { freePort } from '../support/gateway-process.ts';
import { backend, entry, send, simpleTable, startProxy, type TestProxy, to } from './fixtures.ts';

/**
 * h2c backends (GRPCRoute, appProtocol kubernetes.io/h2c) get every request as a stream of its own on one
 * HTTP/2 connection per endpoint, whatever the method or body (issue 13: "multiplexed and balanced per
 * request, not per connection"). The backend is a node:http2 server that counts the streams open at once
 * and the TCP connections they came on.
 */
const CALLS = 20;

/** Every test runs on node:http2's client and on the project's own codec (`--http2-codec`): the same behaviour. */
const CODECS: readonly Http2Codec[] = ['nghttp2', 'js'];

/** A gRPC-style backend: answers each stream at once, echoes every request chunk, ends with trailers. */
class CountingBackend {
  readonly server: Http2Server;
  readonly sessions = new Set<ServerHttp2Session>();
  sessionsSeen = 0;
  open = 0;
  maxOpen = 0;
  /** Each stream's `te` header as the backend got it. */
  readonly te: string[] = [];
  port = 0;
  /** The connection the last stream of each path came on. */
  readonly sessionOf = new Map<string, Http2Session>();
  /** Streams of `/stall` calls, not read from until resumed. */
  readonly stalled: ServerHttp2Stream[] = [];

  constructor(maxConcurrentStreams?: number) {
    this.server = createH2Server(
      maxConcurrentStreams === undefined ? {} : { settings: { maxConcurrentStreams } },
    );
    this.server.on('session', (session: ServerHttp2Session) => {
      this.sessions.add(session);
      this.sessionsSeen++;
      session.on('close', () => this.sessions.delete(session));
    });
    this.server.on('stream', (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) =>
      this.#serve(stream, headers),
    );
  }

  #serve(stream: ServerHttp2Stream, headers: IncomingHttpHeaders): void {
    this.open++;
    this.maxOpen = Math.max(this.maxOpen, this.open);
    this.te.push(String(headers.te));
    if (stream.session !== undefined) this.sessionOf.set(String(headers[':path']), stream.session);
    stream.on('close', () => this.open--);
    stream.on('error', () => {});
    const path = String(headers[':path']);
    if (path === '/hang') return;
    if (path === '/reset') {
      stream.close(constants.NGHTTP2_INTERNAL_ERROR);
      return;
    }
    if (path === '/trailers-only') {
      stream.respond(
        {
          ':status': 200,
          'content-type': 'application/grpc',
          'grpc-status': '5',
          'grpc-message': 'no such thing',
        },
        { endStream: true },
      );
      return;
    }
    if (path === '/reset-mid-body') {
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' });
      stream.write('partial', () => setTimeout(() => stream.close(constants.NGHTTP2_INTERNAL_ERROR), 20));
      return;
    }
    if (path === '/goaway') {
      // No stream after this one is taken on this connection; this one is answered in full.
      stream.session?.goaway(constants.NGHTTP2_NO_ERROR, stream.id);
    }
    if (path === '/stall') {
      // Reads nothing until told to: the request body waits in the flow-control windows.
      stream.pause();
      this.stalled.push(stream);
    }
    if (path.startsWith('/download/')) {
      const total = Number(path.slice('/download/'.length));
      stream.respond({ ':status': 200, 'content-type': 'application/octet-stream' });
      const chunk = Buffer.alloc(64 * 1024, 7);
      let sent = 0;
      const pump = (): void => {
        while (sent < total) {
          sent += chunk.length;
          if (!stream.write(chunk)) {
            stream.once('drain', pump);
            return;
          }
        }
        stream.end();
      };
      pump();
      return;
    }
    stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
    let received = 0;
    stream.on('data', (chunk: Buffer) => {
      received += chunk.length;
      if (path !== '/count' && path !== '/stall') stream.write(chunk);
    });
    stream.on('wantTrailers', () =>
      stream.sendTrailers({ 'grpc-status': '0', 'grpc-message': `got ${received} bytes` }),
    );
    stream.on('end', () => {
      if (path === '/count' || path === '/stall') stream.write(String(received));
      stream.end();
    });
  }

  async listen(port = 0): Promise<number> {
    await new Promise<void>((resolve) => this.server.listen(port, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this.port;
  }

  /** Stops listening and drops every connection, as a restarted backend pod does. */
  async stop(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const session of this.sessions) session.destroy();
    await closed;
  }
}

interface Call {
  readonly status: number;
  /** grpc-status from the trailers, or from the headers of a Trailers-Only answer. */
  readonly grpcStatus: string | undefined;
  readonly body: Buffer;
  readonly trailers: IncomingHttpHeaders;
}

interface CallHandle {
  /** Resolves when the first echoed chunk came back (the response streams before the request ended). */
  readonly echoed: Promise<void>;
  /** Ends the request body. */
  end(last?: string): void;
  readonly done: Promise<Call>;
}

/** A gRPC-style POST through the gateway: streamed body, response read as it comes, trailers kept. */
function call(session: ClientHttp2Session, path: string, first: string): CallHandle {
  const stream = session.request({
    ':method': 'POST',
    ':path': path,
    ':authority': 'grpc.example.com',
    'content-type': 'application/grpc',
    te: 'trailers',
  });
  stream.write(first);
  let resolveEchoed: () => void = () => {};
  const echoed = new Promise<void>((resolve) => {
    resolveEchoed = resolve;
  });
  const done = new Promise<Call>((resolve, reject) => {
    let status = 0;
    let headersGrpcStatus: string | undefined;
    let trailers: IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    stream.on('response', (headers) => {
      status = Number(headers[':status']);
      headersGrpcStatus = headers['grpc-status'] as string | undefined;
    });
    stream.on('trailers', (headers) => {
      trailers = headers;
    });
    stream.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      resolveEchoed();
    });
    stream.on('end', () =>
      resolve({
        status,
        grpcStatus: (trailers['grpc-status'] as string | undefined) ?? headersGrpcStatus,
        body: Buffer.concat(chunks),
        trailers,
      }),
    );
    stream.on('error', reject);
  });
  return { echoed, end: (last) => stream.end(last), done };
}

/** A GET through the gateway, read to its end: its status. */
function get(session: ClientHttp2Session, path: string): Promise<number> {
  const stream = session.request({ ':path': path, ':authority': 'grpc.example.com' });
  return new Promise((resolve, reject) => {
    let status = 0;
    stream.on('response', (headers) => {
      status = Number(headers[':status']);
    });
    stream.resume();
    stream.on('end', () => resolve(status));
    stream.on('error', reject);
  });
}

function openSession(port: number): Promise<ClientHttp2Session> {
  return new Promise((resolve, reject) => {
    const session = connectH2(`http://127.0.0.1:${port}`);
    session.once('connect', () => resolve(session));
    session.once('error', reject);
  });
}

describe.each(CODECS)(
  'h2c backends (%s codec): one HTTP/2 connection per endpoint, a stream per request',
  (http2Codec) => {
    const backendServer = new CountingBackend();
    let proxy: TestProxy;
    let client: ClientHttp2Session;
    const retries: RetryReason[] = [];

    beforeAll(async () => {
      const port = await backendServer.listen();
      const h2 = backend('grpc', [port], 'h2c');
      proxy = await startProxy(simpleTable([entry([to(h2)])], [h2]), undefined, {
        upstream: { onConnectionRetry: (reason) => retries.push(reason), http2Codec },
      });
      client = await openSession(proxy.port());
    });
    afterEach(() => {
      backendServer.maxOpen = 0;
    });
    afterAll(async () => {
      client.close();
      await proxy.close();
      await backendServer.stop();
    });

    it(`runs ${CALLS} streamed POSTs at once on one connection, streaming both ways, trailers passed on`, async () => {
      const sessionsBefore = backendServer.sessionsSeen;
      const calls = Array.from({ length: CALLS }, (_, i) => call(client, '/echo', `hello-${i};`));
      // Every call has its echo back while all bodies are still open: none waited for another to finish.
      await Promise.all(calls.map((c) => c.echoed));
      expect(backendServer.maxOpen).toBe(CALLS);
      for (const [i, c] of calls.entries()) c.end(`bye-${i}`);
      const answers = await Promise.all(calls.map((c) => c.done));
      answers.forEach((answer, i) => {
        expect(answer.status).toBe(200);
        expect(answer.body.toString()).toBe(`hello-${i};bye-${i}`);
        expect(answer.trailers['grpc-status']).toBe('0');
        expect(answer.trailers['grpc-message']).toBe(`got ${`hello-${i};bye-${i}`.length} bytes`);
      });
      expect(backendServer.sessionsSeen - sessionsBefore).toBeLessThanOrEqual(1);
      expect(backendServer.sessions.size).toBe(1);
      expect(backendServer.te.every((te) => te === 'trailers')).toBe(true);
    });

    it('streams large bodies both ways with flow control', async () => {
      const chunk = 'x'.repeat(64 * 1024);
      const session = client;
      // 4 MiB upload, written as the stream takes it.
      const upload = session.request({
        ':method': 'POST',
        ':path': '/count',
        ':authority': 'grpc.example.com',
        'content-type': 'application/grpc',
      });
      let answer = '';
      upload.setEncoding('utf8');
      upload.on('data', (c: string) => {
        answer += c;
      });
      const uploaded = new Promise<void>((resolve, reject) => {
        upload.on('end', () => resolve());
        upload.on('error', reject);
      });
      for (let i = 0; i < 64; i++) {
        if (!upload.write(chunk)) await new Promise((resolve) => upload.once('drain', resolve));
      }
      upload.end();
      await uploaded;
      expect(answer).toBe(String(64 * chunk.length));

      const download = session.request({
        ':path': `/download/${8 * 1024 * 1024}`,
        ':authority': 'grpc.example.com',
      });
      let bytes = 0;
      download.on('data', (c: Buffer) => {
        bytes += c.length;
      });
      await new Promise<void>((resolve, reject) => {
        download.on('end', () => resolve());
        download.on('error', reject);
      });
      expect(bytes).toBe(8 * 1024 * 1024);
    });

    it("a backend's reset of one stream fails that call alone", async () => {
      const calls = Array.from({ length: 5 }, (_, i) => call(client, '/echo', `a-${i};`));
      await Promise.all(calls.map((c) => c.echoed));
      const reset = call(client, '/reset', 'boom');
      reset.end();
      // The gateway answers a gRPC call it could not complete itself: Trailers-Only, UNAVAILABLE (14).
      const failed = await reset.done.then(
        (answer) => answer.grpcStatus,
        () => 'stream error',
      );
      expect(failed).toBe('14');
      for (const c of calls) c.end();
      const answers = await Promise.all(calls.map((c) => c.done));
      for (const answer of answers) expect(answer.trailers['grpc-status']).toBe('0');
    });

    it('opens a new connection after the backend restarts', async () => {
      const first = call(client, '/echo', 'before');
      first.end();
      expect((await first.done).status).toBe(200);
      const sessionsBefore = backendServer.sessionsSeen;
      await backendServer.stop();
      await backendServer.listen(backendServer.port);
      for (let i = 0; i < 3; i++) {
        const again = call(client, '/echo', `after-${i}`);
        again.end();
        const answer = await again.done;
        expect(answer.status).toBe(200);
        expect(answer.body.toString()).toBe(`after-${i}`);
      }
      expect(backendServer.sessionsSeen - sessionsBefore).toBe(1);
    });
  },
);

describe.each(CODECS)(
  'h2c backends (%s codec): a refused connection is a connect failure, failed over',
  (http2Codec) => {
    const live = new CountingBackend();
    let proxy: TestProxy;
    let client: ClientHttp2Session;
    const retries: RetryReason[] = [];

    beforeAll(async () => {
      const dead = await freePort();
      const h2 = backend('grpc', [dead, await live.listen()], 'h2c');
      proxy = await startProxy(simpleTable([entry([to(h2)])], [h2]), undefined, {
        upstream: { onConnectionRetry: (reason) => retries.push(reason), http2Codec },
      });
      client = await openSession(proxy.port());
    });
    afterAll(async () => {
      client.close();
      await proxy.close();
      await live.stop();
    });

    it('sends every call to the endpoint that answers', async () => {
      for (let i = 0; i < 4; i++) {
        const c = call(client, '/echo', `try-${i}`);
        c.end();
        const answer = await c.done;
        expect(answer.status).toBe(200);
        expect(answer.trailers['grpc-status']).toBe('0');
      }
      expect(retries.length).toBeGreaterThan(0);
      expect(new Set(retries)).toEqual(new Set(['connect-failure']));
    });
  },
);

describe.each(CODECS)('h2c backends (%s codec): a backend that never answers', (http2Codec) => {
  const silent = new CountingBackend();
  let proxy: TestProxy;
  let client: ClientHttp2Session;

  beforeAll(async () => {
    const h2 = backend('grpc', [await silent.listen()], 'h2c');
    proxy = await startProxy(simpleTable([entry([to(h2)])], [h2]), undefined, {
      upstream: { responseTimeoutMs: 200, http2Codec },
    });
    client = await openSession(proxy.port());
  });
  afterAll(async () => {
    client.close();
    await proxy.close();
    await silent.stop();
  });

  it('times its call out (DEADLINE_EXCEEDED) and resets only that stream', async () => {
    const hung = call(client, '/hang', 'anyone?');
    hung.end();
    expect((await hung.done).grpcStatus).toBe('4');
    await expect.poll(() => silent.open).toBe(0);
    const next = call(client, '/echo', 'still here');
    next.end();
    expect((await next.done).body.toString()).toBe('still here');
    expect(silent.sessionsSeen).toBe(1);
  });

  it('keeps a call whose body is still uploading past the timeout, and cuts one whose backend went silent mid-body', async () => {
    const request = (path: string) =>
      client.request({
        ':method': 'POST',
        ':path': path,
        ':authority': 'grpc.example.com',
        'content-type': 'application/grpc',
        te: 'trailers',
      });
    // Each chunk sent is activity: 6 chunks 100 ms apart outlast the 200 ms timeout, and the call completes.
    const upload = request('/count');
    const uploaded = new Promise<{ body: string; trailers: IncomingHttpHeaders }>((resolve, reject) => {
      let body = '';
      let trailers: IncomingHttpHeaders = {};
      upload.setEncoding('utf8');
      upload.on('data', (c: string) => {
        body += c;
      });
      upload.on('trailers', (t) => {
        trailers = t;
      });
      upload.on('end', () => resolve({ body, trailers }));
      upload.on('error', reject);
    });
    for (let i = 0; i < 6; i++) {
      upload.write('x');
      await new Promise((r) => setTimeout(r, 100));
    }
    upload.end();
    const done = await uploaded;
    expect(done.body).toBe('6');
    expect(done.trailers['grpc-status']).toBe('0');
    // The backend echoes the first chunk, then nothing comes either way: cut once the timeout passes.
    const stalled = request('/echo');
    stalled.on('error', () => {});
    let trailers: IncomingHttpHeaders | undefined;
    stalled.on('trailers', (t) => {
      trailers = t;
    });
    const echoed = new Promise<void>((r) => stalled.once('data', () => r()));
    stalled.write('first');
    await echoed;
    const startMs = performance.now();
    await new Promise((r) => stalled.once('close', r));
    expect(performance.now() - startMs).toBeGreaterThanOrEqual(150);
    expect(trailers).toBeUndefined();
    await expect.poll(() => silent.open).toBe(0);
  });
});

describe.each(CODECS)(
  "h2c backends (%s codec): the backend's SETTINGS_MAX_CONCURRENT_STREAMS",
  (http2Codec) => {
    const narrow = new CountingBackend(2);
    let proxy: TestProxy;
    let client: ClientHttp2Session;

    beforeAll(async () => {
      const h2 = backend('grpc', [await narrow.listen()], 'h2c');
      proxy = await startProxy(simpleTable([entry([to(h2)])], [h2]), undefined, { upstream: { http2Codec } });
      client = await openSession(proxy.port());
    });
    afterAll(async () => {
      client.close();
      await proxy.close();
      await narrow.stop();
    });

    it('holds calls above it until streams free up, refusing none (the first ones included)', async () => {
      const calls = Array.from({ length: 8 }, (_, i) => call(client, '/echo', `n-${i}`));
      for (const c of calls) c.end();
      const answers = await Promise.all(calls.map((c) => c.done));
      answers.forEach((answer, i) => {
        expect(answer.grpcStatus).toBe('0');
        expect(answer.body.toString()).toBe(`n-${i}`);
      });
      expect(narrow.maxOpen).toBe(2);
      expect(narrow.sessionsSeen).toBe(1);
    });
  },
);

describe.each(CODECS)(
  'h2c backends (%s codec): what a backend sends back and how it goes away',
  (http2Codec) => {
    const backendServer = new CountingBackend();
    let proxy: TestProxy;
    let client: ClientHttp2Session;
    const retries: RetryReason[] = [];

    beforeAll(async () => {
      const h2 = backend('grpc', [await backendServer.listen()], 'h2c');
      proxy = await startProxy(simpleTable([entry([to(h2)])], [h2]), undefined, {
        upstream: { onConnectionRetry: (reason) => retries.push(reason), http2Codec },
      });
      client = await openSession(proxy.port());
    });
    afterAll(async () => {
      client.close();
      await proxy.close();
      await backendServer.stop();
    });

    it('passes a Trailers-Only answer on with its status in the headers', async () => {
      const c = call(client, '/trailers-only', 'anything');
      c.end();
      const answer = await c.done;
      expect(answer.status).toBe(200);
      expect(answer.grpcStatus).toBe('5');
      expect(answer.body.length).toBe(0);
    });

    it("a backend's reset after the response began ends that call without a success status", async () => {
      const c = call(client, '/reset-mid-body', 'x');
      c.end();
      const outcome = await c.done.then(
        (answer) => `answered ${answer.grpcStatus} ${answer.body.toString()}`,
        (err: Error) => `failed ${err.message}`,
      );
      // No grpc-status reaches the client (the stream ends without trailers, or is reset): the call failed.
      expect(outcome).toMatch(/^(failed |answered undefined )/);
      const next = call(client, '/echo', 'next');
      next.end();
      expect((await next.done).body.toString()).toBe('next');
    });

    it('finishes the call in flight after a GOAWAY and sends the next ones on a new connection', async () => {
      const inFlight = call(client, '/goaway', 'first;');
      // The GOAWAY was sent before this echo: the call goes on streaming on the retiring connection.
      await inFlight.echoed;
      const retiring = backendServer.sessionOf.get('/goaway');
      const later = Array.from({ length: 3 }, (_, i) => call(client, '/echo', `later-${i}`));
      for (const c of later) c.end();
      const answers = await Promise.all(later.map((c) => c.done));
      expect(answers.map((a) => a.body.toString())).toEqual([0, 1, 2].map((i) => `later-${i}`));
      expect(backendServer.sessionOf.get('/echo')).not.toBe(retiring);
      inFlight.end('last');
      const first = await inFlight.done;
      expect(first.body.toString()).toBe('first;last');
      expect(first.trailers['grpc-status']).toBe('0');
    });

    it('sends requests the GOAWAY refused, their bodies unsent, again on a new connection, none failed', async () => {
      const streaming = call(client, '/goaway', 'g;');
      // Sent with it: the GETs behind the first stream reach the backend after its GOAWAY named that one the last.
      const gets = Array.from({ length: 4 }, () => get(client, '/download/1024'));
      streaming.end('end');
      expect((await streaming.done).body.toString()).toBe('g;end');
      expect(await Promise.all(gets)).toEqual([200, 200, 200, 200]);
    });

    it('holds an upload while the backend does not read, serves other calls meanwhile, and delivers every byte', async () => {
      const upload = client.request({
        ':method': 'POST',
        ':path': '/stall',
        ':authority': 'grpc.example.com',
        'content-type': 'application/grpc',
      });
      let answer = '';
      upload.setEncoding('utf8');
      upload.on('data', (c: string) => {
        answer += c;
      });
      const uploaded = new Promise<void>((resolve, reject) => {
        upload.on('end', () => resolve());
        upload.on('error', reject);
      });
      const chunk = Buffer.alloc(64 * 1024, 1);
      const total = 2 * 1024 * 1024;
      // More than every flow-control window between here and the backend, written without waiting.
      for (let written = 0; written < total; written += chunk.length) upload.write(chunk);
      upload.end();
      await expect.poll(() => backendServer.stalled.length).toBe(1);
      const other = client.request({ ':path': `/download/${64 * 1024}`, ':authority': 'grpc.example.com' });
      let otherBytes = 0;
      other.on('data', (c: Buffer) => {
        otherBytes += c.length;
      });
      await new Promise<void>((resolve, reject) => {
        other.on('end', () => resolve());
        other.on('error', reject);
      });
      expect(otherBytes).toBe(64 * 1024);
      expect(answer).toBe('');
      backendServer.stalled.shift()!.resume();
      await uploaded;
      expect(answer).toBe(String(total));
    });
  },
);

describe("h2c backends, the js codec on both sides: the client's body written straight into the backend's stream", () => {
  const backendServer = new CountingBackend();
  let proxy: TestProxy;
  let client: ClientHttp2Session;

  beforeAll(async () => {
    const h2 = backend('grpc', [await backendServer.listen()], 'h2c');
    proxy = await startProxy(simpleTable([entry([to(h2)])], [h2]), undefined, {
      http2Codec: 'js',
      upstream: { http2Codec: 'js' },
    });
    client = await openSession(proxy.port());
  });
  afterAll(async () => {
    client.close();
    await proxy.close();
    await backendServer.stop();
  });

  function upload(path: string): {
    stream: ReturnType<ClientHttp2Session['request']>;
    answer: Promise<string>;
  } {
    const stream = client.request({
      ':method': 'POST',
      ':path': path,
      ':authority': 'grpc.example.com',
      'content-type': 'application/grpc',
    });
    let answer = '';
    stream.setEncoding('utf8');
    stream.on('data', (c: string) => {
      answer += c;
    });
    return {
      stream,
      answer: new Promise((resolve, reject) => {
        stream.on('end', () => resolve(answer));
        stream.on('error', reject);
      }),
    };
  }

  it('relays a 4 MiB body under flow control, and one held by a backend that reads late, every byte', async () => {
    const chunk = Buffer.alloc(64 * 1024, 3);
    const paced = upload('/count');
    for (let i = 0; i < 64; i++) {
      if (!paced.stream.write(chunk)) await new Promise((resolve) => paced.stream.once('drain', resolve));
    }
    paced.stream.end();
    expect(await paced.answer).toBe(String(64 * chunk.length));

    const held = upload('/stall');
    for (let i = 0; i < 32; i++) held.stream.write(chunk);
    held.stream.end();
    await expect.poll(() => backendServer.stalled.length).toBe(1);
    backendServer.stalled.shift()!.resume();
    expect(await held.answer).toBe(String(32 * chunk.length));
  });

  it("resets the backend's stream when the client resets mid-body, and serves the next call", async () => {
    const openBefore = backendServer.open;
    const cut = upload('/stall');
    cut.answer.catch(() => {});
    cut.stream.write(Buffer.alloc(1024, 5));
    await expect.poll(() => backendServer.stalled.length).toBe(1);
    expect(backendServer.open).toBe(openBefore + 1);
    cut.stream.close(constants.NGHTTP2_CANCEL);
    await expect.poll(() => backendServer.open).toBe(openBefore);
    backendServer.stalled.length = 0;

    const next = call(client, '/echo', 'after;');
    next.end('reset');
    const answer = await next.done;
    expect(answer.body.toString()).toBe('after;reset');
    expect(answer.trailers['grpc-status']).toBe('0');
  });
});

describe.each(CODECS)('h2c backends (%s codec): no endpoint answers', (http2Codec) => {
  let proxy: TestProxy;
  let client: ClientHttp2Session;

  beforeAll(async () => {
    const h2 = backend('grpc', [await freePort()], 'h2c');
    proxy = await startProxy(simpleTable([entry([to(h2)])], [h2]), undefined, { upstream: { http2Codec } });
    client = await openSession(proxy.port());
  });
  afterAll(async () => {
    client.close();
    await proxy.close();
  });

  it('answers UNAVAILABLE and counts a connect failure against the endpoint', async () => {
    const c = call(client, '/echo', 'anyone?');
    c.end();
    const answer = await c.done;
    expect(answer.status).toBe(200);
    expect(answer.grpcStatus).toBe('14');
    const metrics = await proxy.registry.metrics();
    expect(metrics).toMatch(
      /clusterset_gateway_upstream_requests_total\{[^}]*result="connect-failure"[^}]*\} 1/,
    );
  });
});

describe.each(CODECS)(
  'h2c backends (%s codec): an endpoint that takes the connection but never speaks HTTP/2',
  (http2Codec) => {
    let proxy: TestProxy;
    let client: ClientHttp2Session;
    let mute: Server;
    const accepted: Socket[] = [];

    beforeAll(async () => {
      mute = createTcpServer((socket) => {
        accepted.push(socket);
        socket.on('error', () => {});
      });
      await new Promise<void>((resolve) => mute.listen(0, '127.0.0.1', resolve));
      const h2 = backend('grpc', [(mute.address() as AddressInfo).port], 'h2c');
      proxy = await startProxy(simpleTable([entry([to(h2)])], [h2]), undefined, {
        upstream: { connectTimeoutMs: 200, http2Codec },
      });
      client = await openSession(proxy.port());
    });
    afterAll(async () => {
      client.close();
      await proxy.close();
      for (const socket of accepted) socket.destroy();
      await new Promise((resolve) => mute.close(resolve));
    });

    it('gives up on it at the connect timeout (no SETTINGS) and answers UNAVAILABLE', async () => {
      const c = call(client, '/echo', 'hello?');
      c.end();
      expect((await c.done).grpcStatus).toBe('14');
      expect(accepted.length).toBeGreaterThan(0);
      const metrics = await proxy.registry.metrics();
      expect(metrics).toMatch(
        /clusterset_gateway_upstream_requests_total\{[^}]*result="connect-failure"[^}]*\} 1/,
      );
    });
  },
);

describe.each(CODECS)('h2c backends (%s codec): an idle connection', (http2Codec) => {
  const backendServer = new CountingBackend();
  let proxy: TestProxy;
  let client: ClientHttp2Session;

  beforeAll(async () => {
    const h2 = backend('grpc', [await backendServer.listen()], 'h2c');
    proxy = await startProxy(simpleTable([entry([to(h2)])], [h2]), undefined, {
      upstream: { keepAliveTimeoutMs: 300, http2Codec },
    });
    client = await openSession(proxy.port());
  });
  afterAll(async () => {
    client.close();
    await proxy.close();
    await backendServer.stop();
  });

  it('is closed after the keep-alive timeout, and the next call opens another', async () => {
    const first = call(client, '/echo', 'one');
    first.end();
    expect((await first.done).body.toString()).toBe('one');
    expect(backendServer.sessions.size).toBe(1);
    await expect.poll(() => backendServer.sessions.size, { timeout: 5_000 }).toBe(0);
    const second = call(client, '/echo', 'two');
    second.end();
    expect((await second.done).body.toString()).toBe('two');
    expect(backendServer.sessionsSeen).toBe(2);
  });
});

/**
 * A backend that speaks HTTP/2 frames itself and answers every request in a way no HTTP/2 client may accept:
 * a `:status` that is not three digits, or body bytes before any response headers.
 */
class MalformedBackend {
  readonly server: Server;
  readonly sockets: Socket[] = [];
  requests = 0;

  constructor(answer: 'bad-status' | 'data-first') {
    this.server = createTcpServer((socket) => {
      this.sockets.push(socket);
      socket.on('error', () => {});
      const reader = new FrameReader();
      const encoder = new HpackEncoder();
      let preface = CLIENT_PREFACE.length;
      socket.write(encodeSettings([]));
      socket.on('data', (chunk: Buffer) => {
        if (preface > 0) {
          const skip = Math.min(preface, chunk.length);
          preface -= skip;
          chunk = chunk.subarray(skip);
        }
        reader.push(chunk, (frame) => {
          if (frame.type === FrameType.SETTINGS && (frame.flags & Flag.ACK) === 0)
            socket.write(encodeSettings());
          if (frame.type !== FrameType.HEADERS) return;
          this.requests++;
          if (answer === 'bad-status') {
            socket.write(
              encodeHeaders(frame.streamId, encoder.encode([':status', 'abc']), { endStream: true }),
            );
          } else socket.write(encodeData(frame.streamId, Buffer.from('no headers yet'), true));
        });
      });
    });
  }

  async listen(): Promise<number> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return (this.server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

describe.each(CODECS)('h2c backends (%s codec): a backend that breaks HTTP/2', (http2Codec) => {
  for (const answer of ['bad-status', 'data-first'] as const) {
    it(`answers with the gateway's own status for a response with ${answer === 'bad-status' ? 'a malformed :status' : 'DATA before its headers'}, and goes on serving`, async () => {
      const bad = new MalformedBackend(answer);
      const h2 = backend('grpc', [await bad.listen()], 'h2c');
      const proxy = await startProxy(simpleTable([entry([to(h2)])], [h2]), undefined, {
        upstream: { http2Codec, responseTimeoutMs: 300 },
      });
      const client = await openSession(proxy.port());
      // node:http2 drops DATA before the headers without ending the stream: that call waits for the response
      // timeout (DEADLINE_EXCEEDED); the js codec fails it at once.
      const expected = answer === 'data-first' && http2Codec === 'nghttp2' ? '4' : '14';
      try {
        for (let i = 0; i < 2; i++) {
          const c = call(client, '/echo', 'hello');
          c.end();
          const answered = await c.done;
          expect(answered.grpcStatus).toBe(expected);
          expect(answered.body.length).toBe(0);
        }
        expect(bad.requests).toBeGreaterThanOrEqual(1);
      } finally {
        client.close();
        await proxy.close();
        await bad.stop();
      }
    });
  }
});

describe.each(CODECS)('h2c backends (%s codec): HTTP/1.1 clients', (http2Codec) => {
  const backendServer = new CountingBackend();
  let proxy: TestProxy;

  beforeAll(async () => {
    const h2 = backend('grpc', [await backendServer.listen()], 'h2c');
    proxy = await startProxy(simpleTable([entry([to(h2)])], [h2]), undefined, { upstream: { http2Codec } });
  });
  afterAll(async () => {
    await proxy.close();
    await backendServer.stop();
  });

  it("sends an HTTP/1.1 request's body on the backend's stream, as much as the window allows at a time", async () => {
    const body = Buffer.alloc(3 * 1024 * 1024 + 17, 3);
    const answer = await send(proxy.port(), '/count', { method: 'POST', body });
    expect(answer.status).toBe(200);
    expect(answer.text).toBe(String(body.length));
    const small = await send(proxy.port(), '/count', { method: 'POST', body: 'abc' });
    expect(small.text).toBe('3');
  });
});
