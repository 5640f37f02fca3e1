import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import {
  type ClientHttp2Session,
  connect as connectH2,
  constants,
  createServer as createH2Server,
  type Http2Server,
  type IncomingHttpHeaders,
  type ServerHttp2Stream,
} from 'node:http2';

/** Backends and an HTTP/2 client for comparing the two HTTP/2 server paths (lean-http2.e2e.test.ts). */
const DATE = 'Thu, 01 Jan 2026 00:00:00 GMT';

/** An HTTP/1.1 backend whose answers depend only on the request. */
export function startHttp1Backend(): Promise<Server> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    const url = req.url ?? '';
    if (url.startsWith('/h1/reset-mid-body')) {
      // Reads the first bytes of the body, then drops the connection without answering.
      req.once('data', () => req.socket.destroy());
      return;
    }
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const seen = JSON.stringify({
        method: req.method,
        url,
        host: req.headers.host,
        names: req.rawHeaders.filter((_, i) => i % 2 === 0),
        bytes: body.length,
        sha: createHash('sha256').update(body).digest('hex'),
      });
      if (url.startsWith('/h1/trailers')) {
        res.writeHead(200, { 'content-type': 'text/plain', date: DATE, trailer: 'x-checksum' });
        res.write('part;');
        res.addTrailers({ 'x-checksum': 'abc' });
        res.end(seen);
      } else if (url.startsWith('/h1/empty')) {
        res.writeHead(204, { date: DATE, 'x-empty': 'yes' });
        res.end();
      } else if (url.startsWith('/h1/big')) {
        res.writeHead(200, { 'content-length': 1_048_576, date: DATE });
        res.end(Buffer.alloc(1_048_576, 'x'));
      } else {
        res.setHeader('set-cookie', ['a=1', 'b=2']);
        res.writeHead(200, {
          'content-type': 'application/json',
          date: DATE,
          'X-Mixed-Case': 'v',
          'keep-alive': 'timeout=5',
        });
        res.end(seen);
      }
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/** A gRPC-style h2c backend: echoes the request body, ends with trailers; some paths fail on purpose. */
export function startH2cBackend(): Promise<Http2Server> {
  const server = createH2Server();
  server.on('stream', (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => {
    stream.on('error', () => {});
    const path = String(headers[':path']);
    if (path.endsWith('/Reset')) {
      stream.close(constants.NGHTTP2_INTERNAL_ERROR);
      return;
    }
    if (path.endsWith('/TrailersOnly')) {
      stream.respond(
        {
          ':status': 200,
          'content-type': 'application/grpc',
          'grpc-status': '5',
          'grpc-message': 'not found',
        },
        { endStream: true },
      );
      return;
    }
    if (path.endsWith('/Hang')) return;
    stream.respond(
      { ':status': 200, 'content-type': 'application/grpc', date: DATE },
      { waitForTrailers: true },
    );
    let received = 0;
    stream.on('data', (chunk: Buffer) => {
      received += chunk.length;
      stream.write(chunk);
    });
    stream.on('wantTrailers', () =>
      stream.sendTrailers({ 'grpc-status': '0', 'grpc-message': `got ${received} bytes` }),
    );
    stream.on('end', () => stream.end());
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

export interface H2Answer {
  readonly status: number;
  /** Response header names and values in order, Date blanked. */
  readonly head: string[];
  readonly trailers: string[];
  readonly bytes: number;
  readonly sha: string;
  readonly text: string;
  /** The stream was reset instead of ended (its code). */
  readonly reset: number | undefined;
}

export interface H2Call {
  readonly method?: string;
  readonly path: string;
  readonly authority?: string;
  readonly headers?: Record<string, string>;
  readonly body?: Buffer | string;
}

function comparableHead(raw: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) out.push(raw[i]!, raw[i]! === 'date' ? '-' : raw[i + 1]!);
  return out;
}

export function h2Call(session: ClientHttp2Session, call: H2Call): Promise<H2Answer> {
  return new Promise((resolve) => {
    const stream = session.request(
      {
        ':method': call.method ?? 'GET',
        ':path': call.path,
        ':authority': call.authority ?? 'example.com',
        ...call.headers,
      },
      { endStream: call.body === undefined },
    );
    let status = 0;
    let head: string[] = [];
    let trailers: string[] = [];
    const chunks: Buffer[] = [];
    stream.on('response', (h: IncomingHttpHeaders, _flags: number, raw: string[]) => {
      status = Number(h[':status']);
      head = comparableHead(raw);
    });
    stream.on('trailers', (_h: IncomingHttpHeaders, _flags: number, raw: string[]) => {
      trailers = comparableHead(raw);
    });
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('error', () => {});
    stream.on('close', () => {
      const body = Buffer.concat(chunks);
      resolve({
        status,
        head,
        trailers,
        bytes: body.length,
        sha: createHash('sha256').update(body).digest('hex'),
        text: body.length < 4096 ? body.toString('latin1') : '',
        reset: stream.rstCode === constants.NGHTTP2_NO_ERROR ? undefined : stream.rstCode,
      });
    });
    if (call.body !== undefined) stream.end(call.body);
  });
}

export function openSession(url: string, ca?: string): Promise<ClientHttp2Session> {
  return new Promise((resolve, reject) => {
    const session = connectH2(url, ca === undefined ? {} : { ca, servername: 'example.com' });
    session.once('connect', () => resolve(session));
    session.once('error', reject);
  });
}
