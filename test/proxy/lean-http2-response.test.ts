import type { IncomingHttpHeaders } from 'node:http';
import type { ServerHttp2Stream } from 'node:http2';
import { describe, expect, it } from 'vitest';
import { LeanHttp2Request } from '../../src/proxy/listen/lean-http2-request.ts';
import { LeanHttp2Response } from '../../src/proxy/listen/lean-http2-response.ts';

/** What a response did to its stream: the head it opened the stream with, and how it was destroyed. */
class FakeStream {
  destroyed = false;
  closed = false;
  headersSent = false;
  writableEnded = false;
  session = undefined;
  responded: { headers: Record<string, unknown>; options: Record<string, unknown> } | undefined;
  destroyedWith: Error | undefined;
  readonly written: string[] = [];

  respond(headers: Record<string, unknown>, options: Record<string, unknown>): void {
    this.responded = { headers: { ...headers }, options: { ...options } };
    this.headersSent = true;
    if (options.endStream === true) this.writableEnded = true;
  }
  write(chunk: string): boolean {
    this.written.push(chunk);
    return true;
  }
  end(): void {
    this.writableEnded = true;
  }
  destroy(err?: Error): void {
    this.destroyed = true;
    this.destroyedWith = err;
  }
}

function response(headers: IncomingHttpHeaders = {}): { res: LeanHttp2Response; stream: FakeStream } {
  const stream = new FakeStream();
  const req = new LeanHttp2Request(
    stream as unknown as ServerHttp2Stream,
    { ':method': 'GET', ...headers },
    [],
  );
  return { res: new LeanHttp2Response(req), stream };
}

describe('LeanHttp2Response head', () => {
  it('lower-cases names, lists repeated ones, drops Connection, and puts the status last', () => {
    for (let round = 0; round < 2; round++) {
      // The second round reads the names from the checked-name cache.
      const { res, stream } = response();
      res.writeHead(200, [
        'Content-Type',
        'text/plain',
        'Set-Cookie',
        'a=1',
        'set-cookie',
        'b=2',
        'Connection',
        'close',
      ]);
      expect(stream.responded?.headers).toEqual({
        'content-type': 'text/plain',
        'set-cookie': ['a=1', 'b=2'],
        ':status': 200,
      });
      expect(Object.keys(stream.responded!.headers).at(-1)).toBe(':status');
      expect(res.statusCode).toBe(200);
    }
  });

  it('waits for trailers only when the client announced te: trailers', () => {
    const plain = response();
    plain.res.writeHead(200, []);
    expect(plain.stream.responded?.options).toEqual({ endStream: false });
    plain.res.addTrailers({ 'grpc-status': '0' });
    const grpc = response({ te: 'trailers', 'content-type': 'application/grpc' });
    grpc.res.end();
    expect(grpc.stream.responded?.options).toEqual({ endStream: true, waitForTrailers: true });
  });

  it('refuses what no HTTP/2 response can carry, as the compatibility layer does', () => {
    expect(() => response().res.writeHead(200, [':path', '/'])).toThrow(
      expect.objectContaining({ code: 'ERR_HTTP2_PSEUDOHEADER_NOT_ALLOWED' }),
    );
    expect(() => response().res.writeHead(200, ['bad name', 'x'])).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_HTTP_TOKEN' }),
    );
    // A name seen before (cached) still needs a value.
    expect(() => response().res.writeHead(200, ['Content-Type', undefined as unknown as string])).toThrow(
      expect.objectContaining({ code: 'ERR_HTTP2_INVALID_HEADER_VALUE' }),
    );
    const { res, stream } = response();
    expect(() => res.writeHead(200, ['x(y)', 'v'])).toThrow(
      expect.objectContaining({ code: 'ERR_HTTP2_INVALID_STREAM' }),
    );
    expect(stream.destroyedWith).toMatchObject({ code: 'ERR_INVALID_HTTP_TOKEN' });
    expect(() => {
      const again = response();
      again.res.writeHead(200, []);
      again.res.writeHead(200, []);
    }).toThrow(expect.objectContaining({ code: 'ERR_HTTP2_HEADERS_SENT' }));
  });

  it('writes nothing after a head that ended the stream, and nothing after end', () => {
    const head = response({ ':method': 'HEAD' });
    head.res.writeHead(204, []);
    head.stream.writableEnded = true;
    expect(head.res.write('x')).toBe(true);
    expect(head.stream.written).toEqual([]);
    const { res, stream } = response();
    res.end('body');
    expect(stream.written).toEqual(['body']);
    expect(res.write('more')).toBe(false);
    expect(stream.destroyedWith).toMatchObject({ code: 'ERR_STREAM_WRITE_AFTER_END' });
  });
});
