import { connect as netConnect, type Socket, type TcpNetConnectOpts } from 'node:net';
import type { Duplex } from 'node:stream';

/** The bytes one relay carried: to the upstream (the client's, a head written first included) and back. */
export interface RelayedBytes {
  readonly upstream: number;
  readonly downstream: number;
}

export interface RelayOptions {
  /** Bytes read from the client before the relay (a ClientHello, a CONNECT's early data): sent first. */
  readonly head?: Buffer;
  /**
   * Both sides are closed after this long without a byte either way; 0 or absent: never. The timer is the
   * client's (`setTimeout`), which every byte passes through, read or written.
   */
  readonly idleTimeoutMs?: number;
  /** Runs once, when both sides are closed. */
  readonly closed: (bytes: RelayedBytes) => void;
}

/**
 * Node's own read size: one read syscall per 64 KiB as before, now into memory that is reused. Each relayed
 * upstream connection holds its buffer while it is open (`--layer4-read-buffer-bytes`): 16 KiB cost 1.4x the
 * CPU per byte of 64 KiB in tls-passthrough-64k (bench/README.md).
 */
export const OWN_READ_BUFFER_BYTES = 64 * 1024;

/**
 * The idle read buffers kept for the next connections, in bytes (64 buffers of 64 KiB): a new buffer per
 * connection cost 6-9% of the TCP connection rate (malloc, fresh pages, external memory driving the GC).
 * Enough to cover the churn of short connections; beyond it a closed connection's buffer is left to the GC.
 */
export const IDLE_READ_BUFFERS_BYTES = 4 * 1024 * 1024;

/**
 * Read buffers of one size, taken by a connection when it opens and given back once nothing can point into
 * them any more: the socket closed (no read can come) and no write of their bytes pending on the other side.
 */
export class ReadBufferPool {
  private readonly idle: Buffer[] = [];
  private readonly maxIdle: number;

  constructor(
    readonly bufferBytes: number,
    idleBytes = IDLE_READ_BUFFERS_BYTES,
  ) {
    this.maxIdle = Math.floor(idleBytes / bufferBytes);
  }

  take(): Buffer {
    return this.idle.pop() ?? Buffer.allocUnsafeSlow(this.bufferBytes);
  }

  give(buffer: Buffer): void {
    if (this.idle.length < this.maxIdle) this.idle.push(buffer);
  }

  get idleCount(): number {
    return this.idle.length;
  }
}

const POOLS = new Map<number, ReadBufferPool>();

function poolFor(bufferBytes: number): ReadBufferPool {
  let pool = POOLS.get(bufferBytes);
  if (pool === undefined) {
    pool = new ReadBufferPool(bufferBytes);
    POOLS.set(bufferBytes, pool);
  }
  return pool;
}

/** Where a socket opened by `connectReadingOwnBuffer` hands what it read; the relay sets it. */
interface OwnReads {
  deliver: (bytes: Buffer) => void;
  /** A write of the buffer's bytes is pending on the other side; the relay sets and clears it. */
  writePending: boolean;
  /** The buffer goes back to its pool once the socket is closed and no write is pending. */
  releaseIfIdle: () => void;
}

const OWN_READS = new WeakMap<Duplex, OwnReads>();

/**
 * `net.connect` for a relayed upstream: the socket reads into one buffer of its own, reused for every read
 * (net's `onread`), where net would allocate a 64 KiB buffer per read for the collector to reclaim (the
 * profile of TLS passthrough at 64 KiB: a fifth of the process's CPU in V8's major GC, driven by those
 * buffers' external memory, and page faults on the fresh memory). The buffer comes from a pool and goes back
 * to it when the connection is done with it. The socket starts paused: nothing is read before `relay()`
 * takes it, so no byte is read with nowhere to go.
 */
export function connectReadingOwnBuffer(
  options: TcpNetConnectOpts,
  bufferBytes = OWN_READ_BUFFER_BYTES,
  pool: ReadBufferPool = poolFor(bufferBytes),
): Socket {
  const buffer = pool.take();
  let released = false;
  const reads: OwnReads = {
    // Unreachable while the socket is paused; were it not, the bytes would have nowhere to go.
    deliver: () => socket.destroy(new Error('read before the relay started')),
    writePending: false,
    releaseIfIdle: () => {
      if (released || reads.writePending || !socket.destroyed || !closed) return;
      released = true;
      pool.give(buffer);
    },
  };
  let closed = false;
  const socket: Socket = netConnect({
    ...options,
    onread: {
      buffer,
      callback: (length) => {
        reads.deliver(length === bufferBytes ? buffer : buffer.subarray(0, length));
        return true;
      },
    },
  });
  socket.pause();
  // 'close' comes after the handle is closed: no read into the buffer can follow.
  socket.once('close', () => {
    closed = true;
    reads.releaseIfIdle();
  });
  OWN_READS.set(socket, reads);
  return socket;
}

/**
 * Relays bytes both ways between a client and its upstream until both are closed: each direction with
 * backpressure (a side that cannot take more pauses the other's reads, so the gateway holds at most one read
 * and the streams' high-water marks per direction), an end of input passed on as a half-close, an error on
 * one side destroying the other, and a side that closes ending (cleanly) or destroying (otherwise) the other.
 * Bytes are counted as they pass, for every kind of stream (TCP sockets, TLS sockets, tunnel streams).
 */
export function relay(client: Duplex, upstream: Duplex, options: RelayOptions): void {
  let up = 0;
  let down = 0;
  if (options.head !== undefined && options.head.length > 0) {
    up += options.head.length;
    upstream.write(options.head);
  }
  const countUp = (n: number): void => {
    up += n;
  };
  const countDown = (n: number): void => {
    down += n;
  };
  forward(client, upstream, countUp);
  forward(upstream, client, countDown);
  const idle = options.idleTimeoutMs ?? 0;
  if (idle > 0) {
    (client as Partial<Socket>).setTimeout?.(idle, () => {
      upstream.destroy();
      client.destroy();
    });
  }
  upstream.on('error', () => client.destroy());
  client.on('error', () => upstream.destroy());
  let open = 2;
  const sideClosed = (side: Duplex, other: Duplex): void => {
    open -= 1;
    if (open === 1) {
      // One side is gone for good. After a clean close (its end read, all written to it) the other only has
      // what is queued for it left to send, then its own end; otherwise nothing can be relayed any more.
      if (other.destroyed) return;
      if (side === upstream || (side.readableEnded && side.writableFinished)) other.end();
      else other.destroy();
      return;
    }
    options.closed({ upstream: up, downstream: down });
  };
  client.once('close', () => sideClosed(client, upstream));
  upstream.once('close', () => sideClosed(upstream, client));
  upstream.resume();
  client.resume();
}

/** One direction: `from`'s bytes written to `to`, `from` paused while `to` is behind, `from`'s end passed on. */
function forward(from: Duplex, to: Duplex, count: (n: number) => void): void {
  from.once('end', () => to.end());
  const own = OWN_READS.get(from);
  if (own !== undefined) {
    // The bytes are in `from`'s one buffer, read again at its next read: so `from` reads again only once
    // `to` has taken them. Most writes complete at once (into the kernel); one that does not pauses `from`
    // until its callback, when the buffer is free (and, `from` closed meanwhile, goes back to its pool).
    // Only the pending write's own callback frees it: an earlier write's late callback does not.
    let writes = 0;
    own.deliver = (bytes) => {
      count(bytes.length);
      if (to.destroyed) return;
      writes += 1;
      const thisWrite = writes;
      to.write(bytes, () => {
        if (!own.writePending || thisWrite !== writes) return;
        own.writePending = false;
        if (!from.destroyed) from.resume();
        else own.releaseIfIdle();
      });
      if (to.writableLength > 0) {
        own.writePending = true;
        from.pause();
      }
    };
    return;
  }
  from.on('data', (chunk: Buffer) => {
    count(chunk.length);
    if (!to.write(chunk)) from.pause();
  });
  to.on('drain', () => from.resume());
}
