import {
  constants,
  createServer,
  type Http2Server,
  type ServerHttp2Session,
  type ServerHttp2Stream,
} from 'node:http2';
import type { AddressInfo } from 'node:net';
import { connect as connectTcp, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Http2Connection } from '../../../src/net/http2/connection.ts';
import type {
  Http2Stream,
  Http2StreamHandler,
  Http2StreamReset,
} from '../../../src/net/http2/connection-api.ts';
import { ErrorCode } from '../../../src/net/http2/frames.ts';
import { connectionOnSocket } from '../../../src/net/http2/socket-transport.ts';

/** The js codec's client role against node:http2's server over a real socket. */

interface Answer {
  heads: (string[] | undefined)[];
  body: Buffer;
  trailers: string[][];
  reset: Http2StreamReset | null;
}

function call(connection: Http2Connection, fields: string[], body?: Buffer): Promise<Answer> {
  return new Promise((resolve) => {
    const answer: Answer = { heads: [], body: Buffer.alloc(0), trailers: [], reset: null };
    const chunks: Buffer[] = [];
    const handler: Http2StreamHandler = {
      headers: (_s, f) => answer.heads.push(f),
      data: (s, chunk) => {
        chunks.push(Buffer.from(chunk));
        s.consumed(chunk.length);
      },
      trailers: (_s, f) => answer.trailers.push(f),
      end: () => resolve({ ...answer, body: Buffer.concat(chunks) }),
      reset: (_s, reset) => resolve({ ...answer, body: Buffer.concat(chunks), reset }),
      drain: () => {},
    };
    const stream = connection.request(fields, body === undefined, handler) as Http2Stream;
    if (body !== undefined) stream.sendData(body, true);
  });
}

function dial(port: number): Promise<{ connection: Http2Connection; socket: Socket; goaways: number[] }> {
  return new Promise((resolve, reject) => {
    const socket = connectTcp(port, '127.0.0.1', () => {
      const goaways: number[] = [];
      const connection = connectionOnSocket(socket, {
        role: 'client',
        handler: {
          remoteSettings: () => resolve({ connection, socket, goaways }),
          goaway: (last) => goaways.push(last),
          close: () => {},
        },
      });
    });
    socket.once('error', reject);
  });
}

const req = (method: string, path: string, extra: string[] = []) => [
  ':method',
  method,
  ':scheme',
  'http',
  ':authority',
  'example.com',
  ':path',
  path,
  ...extra,
];

describe('Http2Connection client role against node:http2', () => {
  let server: Http2Server;
  let port: number;
  const open: ServerHttp2Session[] = [];

  beforeAll(async () => {
    server = createServer();
    server.on('session', (session) => open.push(session));
    server.on('stream', (stream: ServerHttp2Stream, headers) => {
      const path = headers[':path'];
      stream.on('error', () => {});
      if (path === '/echo') {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          const body = Buffer.concat(chunks);
          stream.respond({ ':status': 200, 'x-len': String(body.length) }, { waitForTrailers: true });
          stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
          stream.end(body);
        });
      } else if (path === '/continue') {
        stream.additionalHeaders({ ':status': 100 });
        stream.respond({ ':status': 204 }, { endStream: true });
      } else if (path === '/reset') {
        stream.close(constants.NGHTTP2_REFUSED_STREAM);
      } else if (path === '/big-head') {
        stream.respond({ ':status': 200, 'x-big': 'h'.repeat(40_000) }, { endStream: true });
      } else {
        stream.respond({ ':status': 404 }, { endStream: true });
      }
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
  });

  it('sends a request with bodies of 0 B to 3 MB and reads the response, its body and trailers', async () => {
    const { connection, socket } = await dial(port);
    for (const size of [0, 1, 16_384, 70_000, 3_000_000]) {
      const body = Buffer.alloc(size, 'b');
      const answer = await call(connection, req('POST', '/echo'), body);
      expect(answer.heads[0]?.slice(0, 4)).toEqual([':status', '200', 'x-len', String(size)]);
      expect(answer.body.equals(body)).toBe(true);
      expect(answer.trailers).toEqual([['grpc-status', '0']]);
    }
    socket.destroy();
  });

  it('runs many streams at once on one connection', async () => {
    const { connection, socket } = await dial(port);
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) => call(connection, req('POST', '/echo'), Buffer.alloc(i * 1000, i))),
    );
    expect(answers.map((a) => a.body.length)).toEqual(Array.from({ length: 50 }, (_, i) => i * 1000));
    socket.destroy();
  });

  it('delivers an informational 100 before the final head, a long head in CONTINUATION frames', async () => {
    const { connection, socket } = await dial(port);
    const answer = await call(connection, req('GET', '/continue'));
    expect(answer.heads.map((h) => h?.[1])).toEqual(['100', '204']);
    const big = await call(connection, req('GET', '/big-head'));
    expect(big.heads[0]?.[3]).toBe('h'.repeat(40_000));
    socket.destroy();
  });

  it('reports a stream the server refused as retryable', async () => {
    const { connection, socket } = await dial(port);
    const answer = await call(connection, req('GET', '/reset'));
    expect(answer.reset).toEqual({ code: ErrorCode.REFUSED_STREAM, byPeer: true, retryable: true });
    socket.destroy();
  });

  it('hears the server GOAWAY on close and opens no more streams', async () => {
    const { connection, socket, goaways } = await dial(port);
    await call(connection, req('GET', '/nothing'));
    const closed = new Promise((r) => socket.once('close', r));
    for (const session of open) if (!session.closed) session.close();
    await closed;
    expect(goaways.at(-1)).toBe(1);
    expect(connection.canRequest).toBe(false);
  });
});
