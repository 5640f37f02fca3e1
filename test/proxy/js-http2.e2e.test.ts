import { execFile } from 'node:child_process';
import type { Server } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CLIENT_PREFACE,
  ErrorCode,
  encodeData,
  encodeFrame,
  encodeHeaders,
  encodePing,
  encodeRstStream,
  encodeSettings,
  FrameReader,
  FrameType,
  readGoaway,
} from '../../src/net/http2/frames.ts';
import { HpackEncoder } from '../../src/net/http2/hpack.ts';
import { backend, entry, simpleTable, startProxy, type TestProxy, to } from './fixtures.ts';
import { h2Call, openSession, startHttp1Backend } from './lean-http2-fixtures.ts';

/**
 * The js HTTP/2 codec (`--http2-codec js`) over real sockets: the command-line clients (curl, nghttp) get the
 * same answers as from the lean path on node:http2, and hostile clients get their GOAWAY or RST_STREAM while the
 * proxy serves on.
 */

function run(command: string, args: string[]): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(command, args, { encoding: 'latin1', maxBuffer: 8 << 20 }, (error, stdout) =>
      resolve(error !== null && (error as NodeJS.ErrnoException).code === 'ENOENT' ? undefined : stdout),
    );
  });
}

const GET = [':method', 'GET', ':scheme', 'http', ':authority', 'example.com', ':path', '/h1/echo'];

/** A raw HTTP/2 client: frames written as given, frames read back until the connection closes or `ms` pass. */
function rawExchange(
  port: number,
  frames: Buffer[],
  ms = 500,
): Promise<{ type: number; streamId: number; payload: Buffer }[]> {
  return new Promise((resolve) => {
    const seen: { type: number; streamId: number; payload: Buffer }[] = [];
    const reader = new FrameReader({ maxFrameSize: 1 << 24 });
    const socket: Socket = connect(port, '127.0.0.1', () => {
      socket.write(Buffer.concat([CLIENT_PREFACE, encodeSettings([]), ...frames]));
    });
    socket.on('data', (chunk: Buffer) => {
      try {
        reader.push(chunk, (f) =>
          seen.push({ type: f.type, streamId: f.streamId, payload: Buffer.from(f.payload) }),
        );
      } catch {
        socket.destroy();
      }
    });
    socket.on('error', () => {});
    const timer = setTimeout(() => socket.destroy(), ms);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(seen);
    });
  });
}

describe('the js HTTP/2 codec on a listener', () => {
  let h1: Server;
  let js: TestProxy;
  let lean: TestProxy;

  beforeAll(async () => {
    h1 = await startHttp1Backend();
    const b = backend('h1', [(h1.address() as AddressInfo).port]);
    const table = simpleTable([entry([to(b)])], [b]);
    js = await startProxy(table, undefined, { http2Codec: 'js' });
    lean = await startProxy(table, undefined, { http2Codec: 'nghttp2' });
  });
  afterAll(async () => {
    await Promise.all([js?.close(), lean?.close()]);
    await new Promise((r) => h1?.close(r));
  });

  it('answers curl --http2-prior-knowledge as the lean path does (status, headers, body)', async () => {
    const curl = async (proxy: TestProxy) =>
      run('curl', [
        '-sS',
        '--http2-prior-knowledge',
        '-D',
        '-',
        '-H',
        'Host: example.com',
        '--data-binary',
        'x'.repeat(100_000),
        `http://127.0.0.1:${proxy.port(80)}/h1/echo?curl`,
      ]);
    const [a, b] = await Promise.all([curl(js), curl(lean)]);
    if (a === undefined) return; // curl not installed
    const normalize = (text: string) => text.replace(/^date: .*$/m, 'date: -');
    expect(a).toMatch(/^HTTP\/2 200/);
    expect(normalize(a)).toBe(normalize(b!));
  });

  it('answers nghttp as the lean path does', async () => {
    const nghttp = async (proxy: TestProxy) =>
      run('nghttp', [
        '-n',
        '-s',
        '-H',
        ':authority: example.com',
        `http://127.0.0.1:${proxy.port(80)}/h1/echo`,
      ]);
    const [a, b] = await Promise.all([nghttp(js), nghttp(lean)]);
    if (a === undefined) return; // nghttp not installed
    expect(a).toContain('200');
    expect(a.split('\n').length).toBe(b!.split('\n').length);
  });

  it('answers 431 to a request over --max-header-bytes and 400 over --max-headers, as on HTTP/1', async () => {
    const session = await openSession(`http://127.0.0.1:${js.port(80)}`);
    const big = await h2Call(session, { path: '/h1/echo', headers: { 'x-big': 'v'.repeat(20_000) } });
    const headers = Object.fromEntries(Array.from({ length: 120 }, (_, i) => [`x-h${i}`, 'v']));
    const many = await h2Call(session, { path: '/h1/echo', headers });
    const fine = await h2Call(session, { path: '/h1/echo' });
    session.destroy();
    expect([big.status, many.status, fine.status]).toEqual([431, 400, 200]);
  });

  it('resets a malformed request with PROTOCOL_ERROR and serves the next on the same connection', async () => {
    const encoder = new HpackEncoder();
    const frames = await rawExchange(js.port(80), [
      encodeHeaders(1, encoder.encode([...GET, 'connection', 'close']), { endStream: true }),
      encodeHeaders(3, encoder.encode(GET), { endStream: true }),
    ]);
    const resets = frames.filter((f) => f.type === FrameType.RST_STREAM);
    expect(resets.map((f) => [f.streamId, f.payload.readUInt32BE(0)])).toEqual([
      [1, ErrorCode.PROTOCOL_ERROR],
    ]);
    expect(frames.some((f) => f.type === FrameType.HEADERS && f.streamId === 3)).toBe(true);
  });

  it('resets a body longer than its content-length with PROTOCOL_ERROR', async () => {
    const encoder = new HpackEncoder();
    const frames = await rawExchange(js.port(80), [
      encodeHeaders(1, encoder.encode([...GET.slice(0, 1), 'POST', ...GET.slice(2), 'content-length', '3']), {
        endStream: false,
      }),
      encodeData(1, Buffer.from('12345'), true),
    ]);
    const resets = frames.filter((f) => f.type === FrameType.RST_STREAM);
    expect(resets.map((f) => [f.streamId, f.payload.readUInt32BE(0)])).toEqual([
      [1, ErrorCode.PROTOCOL_ERROR],
    ]);
  });

  it('ends a CONTINUATION flood, a rapid reset flood with GOAWAY, a broken preface with an HTTP/1 505, and serves on', async () => {
    const encoder = new HpackEncoder();
    const flood = Array.from({ length: 200 }, () =>
      encodeFrame(FrameType.CONTINUATION, 0, 1, Buffer.alloc(1, 0)),
    );
    const continuation = await rawExchange(js.port(80), [
      encodeFrame(FrameType.HEADERS, 0, 1, Buffer.alloc(0)),
      ...flood,
    ]);
    const goaway = continuation.find((f) => f.type === FrameType.GOAWAY);
    expect(goaway && readGoaway(goaway.payload).code).toBe(ErrorCode.ENHANCE_YOUR_CALM);

    const resets: Buffer[] = [];
    for (let id = 1; id < 2 * 1100; id += 2) {
      resets.push(
        encodeHeaders(id, encoder.encode(GET), { endStream: false }),
        encodeRstStream(id, ErrorCode.CANCEL),
      );
    }
    const rapid = await rawExchange(js.port(80), resets, 3000);
    const calm = rapid.find((f) => f.type === FrameType.GOAWAY);
    expect(calm && readGoaway(calm.payload).code).toBe(ErrorCode.ENHANCE_YOUR_CALM);

    const wrong = await new Promise<Buffer>((resolve) => {
      const socket = connect(js.port(80), '127.0.0.1', () =>
        socket.write('PRI * HTTP/2.0\r\n\r\nXX\r\n\r\n'),
      );
      const chunks: Buffer[] = [];
      socket.on('data', (c: Buffer) => chunks.push(c));
      socket.on('error', () => {});
      socket.on('close', () => resolve(Buffer.concat(chunks)));
    });
    // Cleartext bytes that are not the whole preface are HTTP/1's to answer (http2-preface.ts): version 2.0 is not supported there.
    expect(wrong.toString('latin1')).toMatch(/^HTTP\/1\.1 505 /);

    const pinged = await rawExchange(js.port(80), [encodePing(Buffer.alloc(8, 7), false)]);
    expect(pinged.some((f) => f.type === FrameType.PING)).toBe(true);
    const session = await openSession(`http://127.0.0.1:${js.port(80)}`);
    const answer = await h2Call(session, { path: '/h1/echo' });
    session.destroy();
    expect(answer.status).toBe(200);
  });
});
