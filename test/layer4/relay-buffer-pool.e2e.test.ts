import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { type AddressInfo, connect, createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectReadingOwnBuffer, ReadBufferPool, relay } from '../../src/proxy/upstream/byte-relay.ts';

/**
 * The relay's pooled read buffers, over real sockets on 127.0.0.1: connections open and close while others
 * stream, each taking a buffer another has given back, and every byte each client receives is checked against
 * the pattern its backend sent. A buffer reused while a write of its bytes is still queued (the client not
 * reading, the upstream already closed) would show as bytes of another connection.
 */

/** Small buffers and a small pool: many reads per connection, and reuse on nearly every new connection. */
const BUFFER_BYTES = 4096;
const TAPE = randomBytes(100_003);
const TWO_TAPES = Buffer.concat([TAPE, TAPE]);

/**
 * Stream `seed`'s bytes from `offset` (`length` at most the tape's): each connection's seed shifts the
 * pattern, so bytes of another connection, or from elsewhere in its own stream, do not match.
 */
function patternAt(seed: number, offset: number, length: number): Buffer {
  const start = (seed * 7919 + offset) % TAPE.length;
  return TWO_TAPES.subarray(start, start + length);
}

/** Counts the buffers handed out that another connection had given back. */
class CountingPool extends ReadBufferPool {
  reused = 0;
  override take(): Buffer {
    if (this.idleCount > 0) this.reused += 1;
    return super.take();
  }
}

/** A backend that reads an 8-byte request (seed, length), sends `length` bytes of `seed`'s pattern, and ends. */
function startPatternBackend(): Server {
  return createServer({ allowHalfOpen: true }, (socket) => {
    let request = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      request = Buffer.concat([request, chunk]);
      if (request.length < 8) return;
      socket.removeAllListeners('data');
      socket.resume();
      const seed = request.readUInt32BE(0);
      const total = request.readUInt32BE(4);
      let offset = 0;
      const more = (): void => {
        while (offset < total) {
          const length = Math.min(16 * 1024, total - offset);
          const ok = socket.write(patternAt(seed, offset, length));
          offset += length;
          if (!ok) {
            socket.once('drain', more);
            return;
          }
        }
        socket.end();
      };
      more();
    });
    socket.on('error', () => socket.destroy());
  });
}

/** The gateway's relay on its own: each client's upstream reads into a buffer from `pool`. */
function startRelay(backendPort: number, pool: ReadBufferPool): Server {
  return createServer({ pauseOnConnect: true, allowHalfOpen: true }, (client) => {
    const upstream = connectReadingOwnBuffer(
      { host: '127.0.0.1', port: backendPort, allowHalfOpen: true, noDelay: true },
      BUFFER_BYTES,
      pool,
    );
    upstream.once('error', () => client.destroy());
    client.once('error', () => upstream.destroy());
    upstream.once('connect', () => relay(client, upstream, { closed: () => {} }));
  });
}

async function listen(server: Server): Promise<number> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}

interface Received {
  /** Bytes received in order that matched the pattern, up to the first that did not. */
  matched: number;
  received: number;
}

/** Requests `total` bytes of `seed`'s pattern through the relay; checks every byte as it arrives. */
function fetchPattern(port: number, seed: number, total: number, hold?: Promise<void>): Promise<Received> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, allowHalfOpen: true });
    const request = Buffer.alloc(8);
    request.writeUInt32BE(seed, 0);
    request.writeUInt32BE(total, 4);
    socket.end(request);
    const result: Received = { matched: 0, received: 0 };
    let wrong = false;
    socket.on('data', (chunk: Buffer) => {
      if (!wrong && chunk.equals(patternAt(seed, result.received, chunk.length)))
        result.matched += chunk.length;
      else wrong = true;
      result.received += chunk.length;
    });
    socket.on('end', () => resolve(result));
    socket.on('error', reject);
    if (hold !== undefined) {
      socket.pause();
      void hold.then(() => socket.resume());
    }
  });
}

/**
 * Requests a long stream and destroys the connection mid-stream: after its first bytes, or, `until` given,
 * without reading until then (the relay's writes to it queued, its upstream's buffer still theirs).
 */
function abandonPattern(port: number, seed: number, until?: Promise<void>): Promise<void> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    const request = Buffer.alloc(8);
    request.writeUInt32BE(seed, 0);
    request.writeUInt32BE(64 * 1024 * 1024, 4);
    socket.write(request);
    if (until === undefined) socket.once('data', () => socket.destroy());
    else {
      socket.pause();
      void until.then(() => socket.destroy());
    }
    socket.on('error', () => {});
    socket.once('close', () => resolve());
  });
}

describe('relay read buffer pool', () => {
  let backend: Server;
  let relayServer: Server;
  let port: number;
  const pool = new CountingPool(BUFFER_BYTES, 8 * BUFFER_BYTES);

  beforeAll(async () => {
    backend = startPatternBackend();
    relayServer = startRelay(await listen(backend), pool);
    port = await listen(relayServer);
  });

  afterAll(async () => {
    relayServer?.close();
    backend?.close();
  });

  it('gives every client exactly its own bytes while connections come and go around it', async () => {
    // Held clients: their upstream sends everything and closes while the relay's writes to them are still
    // queued (they do not read), so their buffers must stay theirs until those writes complete.
    let release: () => void = () => {};
    const hold = new Promise<void>((resolve) => {
      release = resolve;
    });
    // More than the kernel buffers on the way hold (8-9 MiB on loopback), so writes to them stay queued.
    const heldTotal = 24 * 1024 * 1024;
    const held = [1, 2, 3].map((seed) => fetchPattern(port, seed, heldTotal, hold));
    const abandonedWhileQueued = [4, 5].map((seed) => abandonPattern(port, seed, hold));

    // Meanwhile: rounds of short and medium streams, and clients that leave mid-stream, all taking buffers.
    const churn: Array<Promise<Received>> = [];
    const churnTotals = new Map<number, number>();
    for (let round = 0; round < 10; round += 1) {
      const wave: Array<Promise<unknown>> = [];
      for (let i = 0; i < 12; i += 1) {
        const seed = 100 + round * 12 + i;
        const total = i % 3 === 0 ? 200 * 1024 : 1 + ((seed * 997) % 20_000);
        churnTotals.set(churn.length, total);
        const fetched = fetchPattern(port, seed, total);
        churn.push(fetched);
        wave.push(fetched);
      }
      wave.push(abandonPattern(port, 1000 + round), abandonPattern(port, 2000 + round));
      await Promise.all(wave);
    }
    const reusedWhileHeld = pool.reused;
    release();

    await Promise.all(abandonedWhileQueued);
    const afterAbandoned = Array.from({ length: 12 }, (_, i) => fetchPattern(port, 3000 + i, 50_000));
    for (const result of await Promise.all(afterAbandoned))
      expect(result).toEqual({ matched: 50_000, received: 50_000 });

    const heldResults = await Promise.all(held);
    for (const result of heldResults) expect(result).toEqual({ matched: heldTotal, received: heldTotal });
    const churnResults = await Promise.all(churn);
    churnResults.forEach((result, index) => {
      const total = churnTotals.get(index);
      expect(result).toEqual({ matched: total, received: total });
    });
    // The check above ran while buffers were being reused, not beside an idle pool.
    expect(reusedWhileHeld).toBeGreaterThan(50);
  });

  it('keeps at most its bound of idle buffers', () => {
    const bounded = new ReadBufferPool(1024, 3 * 1024);
    const taken = Array.from({ length: 10 }, () => bounded.take());
    expect(new Set(taken).size).toBe(10);
    for (const buffer of taken) bounded.give(buffer);
    expect(bounded.idleCount).toBe(3);
    expect(taken).toContain(bounded.take());
  });
});
