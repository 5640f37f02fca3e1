import { once } from 'node:events';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { COALESCE_MAX_BYTES, writeTurn } from '../../../src/net/http2/turn-write.ts';

let server: Server | undefined;
let client: Socket | undefined;

afterEach(async () => {
  client?.destroy();
  if (server !== undefined) await new Promise((resolve) => server!.close(resolve));
  server = undefined;
  client = undefined;
});

/** A connected pair on 127.0.0.1: the writer (ours) and a reader, paused until `received` collects its bytes. */
async function socketPair(): Promise<{ writer: Socket; received: () => Promise<Buffer> }> {
  const accepted = new Promise<Socket>((resolve) => {
    server = createServer(resolve);
  });
  server!.listen(0, '127.0.0.1');
  await once(server!, 'listening');
  const address = server!.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  client = connect(address.port, '127.0.0.1');
  await once(client, 'connect');
  const reader = await accepted;
  reader.pause();
  // Resumed by the caller once every turn is written: the writer's queued views must survive the turns after them.
  const received = async () => {
    const parts: Buffer[] = [];
    reader.on('data', (chunk: Buffer) => parts.push(chunk));
    reader.resume();
    await once(reader, 'end');
    return Buffer.concat(parts);
  };
  return { writer: client, received };
}

/** A frame-like chunk of `length` bytes, each byte marking its turn and place. */
function chunk(turn: number, index: number, length: number): Buffer {
  const bytes = Buffer.alloc(length);
  for (let i = 0; i < length; i++) bytes[i] = (turn * 7 + index * 13 + i) & 0xff;
  return bytes;
}

describe('writeTurn', () => {
  it('delivers every turn in order while the peer reads nothing, past several coalescing slabs', async () => {
    const { writer, received } = await socketPair();
    // fills the kernel's buffers, so that the turns below wait in the socket's queue as views of the slabs
    const filler = Buffer.alloc(32 * 1024 * 1024, 1);
    writer.write(filler);
    const expected: Buffer[] = [filler];
    for (let turn = 0; turn < 300; turn++) {
      // a gRPC call's turn: HEADERS, DATA, trailers (small, coalesced); every tenth a large turn (corked)
      const sizes = turn % 10 === 9 ? [9, COALESCE_MAX_BYTES, 9, 40] : [60, 9 + (turn % 50), 30];
      const chunks = sizes.map((size, index) => chunk(turn, index, size));
      expected.push(...chunks);
      writeTurn(writer, chunks);
    }
    writeTurn(writer, [chunk(300, 0, 5)]);
    expected.push(chunk(300, 0, 5));
    expect(writer.writableLength).toBeGreaterThan(COALESCE_MAX_BYTES * 30);
    writer.end();
    const bytes = await received();
    expect(bytes.length).toBe(Buffer.concat(expected).length);
    expect(bytes.equals(Buffer.concat(expected))).toBe(true);
  });
});
