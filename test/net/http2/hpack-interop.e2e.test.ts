/**
 * HPACK against nghttp2 (node:http2) over real sockets on 127.0.0.1, with just enough HTTP/2 framing in the test
 * to carry header blocks: (a) a node:http2 client's requests decoded by our HpackDecoder, (b) our HpackEncoder's
 * blocks sent to a node:http2 server, many on one connection so both dynamic tables are in play, and a
 * SETTINGS_HEADER_TABLE_SIZE change midway.
 */
import http2 from 'node:http2';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { mulberry32 } from '../../../src/lb/seeded-random.ts';
import { HpackDecoder, HpackEncoder } from '../../../src/net/http2/hpack.ts';

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');
const DATA = 0x0;
const HEADERS = 0x1;
const SETTINGS = 0x4;
const CONTINUATION = 0x9;
const END_STREAM = 0x1;
const ACK = 0x1;
const END_HEADERS = 0x4;
const PADDED = 0x8;
const PRIORITY = 0x20;
const SETTINGS_HEADER_TABLE_SIZE = 0x1;
const MAX_FRAME = 16384;

interface Frame {
  type: number;
  flags: number;
  streamId: number;
  payload: Buffer;
}

function frame(type: number, flags: number, streamId: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const head = Buffer.alloc(9);
  head.writeUIntBE(payload.length, 0, 3);
  head[3] = type;
  head[4] = flags;
  head.writeUInt32BE(streamId, 5);
  return Buffer.concat([head, payload]);
}

/** A header block as HEADERS and, past the frame size, CONTINUATION frames. */
function headerFrames(streamId: number, block: Buffer, endStream: boolean): Buffer {
  const frames: Buffer[] = [];
  for (let at = 0; at === 0 || at < block.length; at += MAX_FRAME) {
    const last = at + MAX_FRAME >= block.length;
    const type = at === 0 ? HEADERS : CONTINUATION;
    const flags = (last ? END_HEADERS : 0) | (at === 0 && endStream ? END_STREAM : 0);
    frames.push(frame(type, flags, streamId, block.subarray(at, at + MAX_FRAME)));
  }
  return Buffer.concat(frames);
}

/** Frames out of a byte stream, and header blocks out of HEADERS + CONTINUATION (padding and priority off). */
class Framing {
  private pending = Buffer.alloc(0);
  private fragments: Buffer[] = [];
  constructor(private readonly onFrame: (frame: Frame, block?: Buffer) => void) {}

  push(chunk: Buffer): void {
    this.pending = Buffer.concat([this.pending, chunk]);
    while (this.pending.length >= 9) {
      const length = this.pending.readUIntBE(0, 3);
      if (this.pending.length < 9 + length) return;
      const f: Frame = {
        type: this.pending[3]!,
        flags: this.pending[4]!,
        streamId: this.pending.readUInt32BE(5) & 0x7fffffff,
        payload: this.pending.subarray(9, 9 + length),
      };
      this.pending = this.pending.subarray(9 + length);
      if (f.type === HEADERS) {
        let payload = f.payload;
        if (f.flags & PADDED) payload = payload.subarray(1, payload.length - payload[0]!);
        if (f.flags & PRIORITY) payload = payload.subarray(5);
        this.fragments = [payload];
      } else if (f.type === CONTINUATION) {
        this.fragments.push(f.payload);
      }
      const block =
        (f.type === HEADERS || f.type === CONTINUATION) && f.flags & END_HEADERS
          ? Buffer.concat(this.fragments)
          : undefined;
      this.onFrame(f, block);
    }
  }
}

/** Header values of every kind a client sends. */
function headerSets(count: number): Record<string, string>[] {
  const random = mulberry32(7541);
  const text = (length: number, from: number, to: number) => {
    let s = '';
    for (let i = 0; i < length; i++) s += String.fromCharCode(from + Math.floor(random() * (to - from)));
    return s;
  };
  const sets: Record<string, string>[] = [];
  for (let i = 0; i < count; i++) {
    const set: Record<string, string> = {
      'x-seq': String(i),
      'user-agent':
        'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36',
      accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
      'accept-language': 'en-US,en;q=0.5',
      'x-huffman-heavy': text(20 + Math.floor(random() * 60), 0x61, 0x7b),
      'x-latin1': `caf\u00e9 ${text(8, 0xa0, 0x100)}`,
      cookie: i % 3 === 0 ? 'id=42' : `session=${text(40, 0x30, 0x3a)}; theme=dark`,
    };
    if (i % 5 === 0) set['x-long'] = text(2000 + Math.floor(random() * 20000), 0x21, 0x7f);
    if (i % 4 === 1) set.authorization = `Bearer ${text(30, 0x41, 0x5b)}`;
    sets.push(set);
  }
  return sets;
}

const closers: (() => void)[] = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
});

function listen(server: net.Server): Promise<number> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port)),
  );
}

describe('HPACK interop with nghttp2 (node:http2)', () => {
  it('(a) decodes the header blocks of a node:http2 client, many requests on one connection', async () => {
    const decoded = new Map<string, string[]>();
    const server = net.createServer((socket) => {
      const decoder = new HpackDecoder({ maxHeaderListSize: 1 << 20 });
      const encoder = new HpackEncoder();
      let prefaceSeen = false;
      let buffered = Buffer.alloc(0);
      const framing = new Framing((f, block) => {
        if (f.type === SETTINGS && !(f.flags & ACK)) socket.write(frame(SETTINGS, ACK, 0));
        if (block === undefined) return;
        const list = decoder.decode(block)!;
        decoded.set(list[list.indexOf('x-seq') + 1]!, list);
        socket.write(headerFrames(f.streamId, encoder.encode([':status', '200']), true));
      });
      socket.write(frame(SETTINGS, 0, 0));
      socket.on('data', (chunk: Buffer) => {
        if (prefaceSeen) return framing.push(chunk);
        buffered = Buffer.concat([buffered, chunk]);
        if (buffered.length < PREFACE.length) return;
        expect(buffered.subarray(0, PREFACE.length)).toEqual(PREFACE);
        prefaceSeen = true;
        framing.push(buffered.subarray(PREFACE.length));
      });
    });
    const port = await listen(server);
    closers.push(() => server.close());
    const client = http2.connect(`http://127.0.0.1:${port}`);
    closers.push(() => client.destroy());

    const sets = headerSets(120);
    const request = (set: Record<string, string>) =>
      new Promise<number>((resolve, reject) => {
        const stream = client.request({ ':path': `/items/${set['x-seq']}`, ...set }, { endStream: true });
        stream.on('response', (headers) => resolve(Number(headers[':status'])));
        stream.on('error', reject);
        stream.resume();
      });
    // In waves, so blocks are decoded while the client's table keeps changing.
    for (let wave = 0; wave < sets.length; wave += 20) {
      const statuses = await Promise.all(sets.slice(wave, wave + 20).map(request));
      expect(statuses.every((s) => s === 200)).toBe(true);
    }

    expect(decoded.size).toBe(sets.length);
    for (const set of sets) {
      const list = decoded.get(set['x-seq']!)!;
      const got = new Map<string, string>();
      for (let i = 0; i < list.length; i += 2) got.set(list[i]!, list[i + 1]!);
      expect(got.get(':method')).toBe('GET');
      expect(got.get(':path')).toBe(`/items/${set['x-seq']}`);
      expect(got.get(':authority')).toBe(`127.0.0.1:${port}`);
      for (const [name, value] of Object.entries(set)) expect(got.get(name), name).toBe(value);
      expect(list.length / 2).toBe(Object.keys(set).length + 4);
    }
  });

  it('(b) sends our encoder blocks to a node:http2 server, which sees the same headers, table size changed', async () => {
    const seen = new Map<string, string[]>();
    const server = http2.createServer({ settings: { headerTableSize: 1024, maxHeaderListSize: 1 << 20 } });
    server.on(
      'stream',
      (stream: http2.ServerHttp2Stream, _headers: unknown, _flags: number, rawHeaders: string[]) => {
        const seq = rawHeaders[rawHeaders.indexOf('x-seq') + 1]!;
        seen.set(seq, rawHeaders);
        // Midway, the server shrinks its table: our encoder must open its next block with a size update.
        if (seq === '40') stream.session?.settings({ headerTableSize: 200 });
        if (seq === '80') stream.session?.settings({ headerTableSize: 4096 });
        stream.respond(
          { ':status': 200, 'x-answer-to': seq, 'cache-control': 'no-store' },
          { endStream: true },
        );
      },
    );
    const port = await listen(server);
    closers.push(() => server.close());

    const socket = net.connect(port, '127.0.0.1');
    closers.push(() => socket.destroy());
    await new Promise((resolve) => socket.once('connect', resolve));
    const encoder = new HpackEncoder();
    const decoder = new HpackDecoder({ maxHeaderListSize: 1 << 20 });
    const tableSizes: number[] = [];
    let answered: ((list: string[]) => void) | undefined;
    const framing = new Framing((f, block) => {
      if (f.type === SETTINGS && !(f.flags & ACK)) {
        for (let at = 0; at + 6 <= f.payload.length; at += 6) {
          if (f.payload.readUInt16BE(at) === SETTINGS_HEADER_TABLE_SIZE) {
            const size = f.payload.readUInt32BE(at + 2);
            encoder.setPeerMaxTableSize(size);
            tableSizes.push(size);
          }
        }
        socket.write(frame(SETTINGS, ACK, 0));
      }
      if (block !== undefined) answered?.(decoder.decode(block)!);
      if (f.type === DATA && f.payload.length > 0) throw new Error('unexpected DATA');
    });
    socket.on('data', (chunk: Buffer) => framing.push(chunk));
    socket.write(Buffer.concat([PREFACE, frame(SETTINGS, 0, 0)]));

    const sets = headerSets(120);
    for (const [i, set] of sets.entries()) {
      const fields = [
        ':method',
        'GET',
        ':scheme',
        'http',
        ':path',
        `/items/${i}`,
        ':authority',
        'gateway.test',
      ];
      for (const [name, value] of Object.entries(set)) fields.push(name, value);
      const answer = new Promise<string[]>((resolve) => {
        answered = resolve;
      });
      socket.write(headerFrames(1 + 2 * i, encoder.encode(fields), true));
      const response = await answer;
      expect(response.slice(0, 4)).toEqual([':status', '200', 'x-answer-to', String(i)]);
      expect(seen.get(String(i))).toEqual(fields);
    }
    expect(tableSizes).toEqual([1024, 200, 4096]);
  });
});
