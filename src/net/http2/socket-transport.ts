/**
 * An Http2Connection on a socket: the socket's bytes into `receive`, the connection's frames of a turn written
 * together (turn-write.ts), its backpressure reported, its close passed on. The only I/O of the js codec.
 */
import type { Socket } from 'node:net';
import { DEFAULT_LIMITS, Http2Connection } from './connection.ts';
import type { Http2ConnectionOptions, Http2Transport } from './connection-api.ts';
import { writeTurn } from './turn-write.ts';

/** How long an ended socket may take to close (a peer that does not read our GOAWAY) before it is destroyed. */
const END_GRACE_MS = 2000;

/**
 * Runs an Http2Connection over `socket` (a plain or TLS socket, connected). `head`: bytes already read from the
 * socket (a sniffed preface) that come first.
 */
export function connectionOnSocket(
  socket: Socket,
  options: Omit<Http2ConnectionOptions, 'transport'>,
  head?: Buffer,
): Http2Connection {
  const bound = options.limits?.maxBufferedOutput ?? DEFAULT_LIMITS.maxBufferedOutput;
  const transport: Http2Transport = {
    write(chunks) {
      if (socket.destroyed) return true;
      writeTurn(socket, chunks);
      return socket.writableLength <= bound;
    },
    end() {
      if (socket.destroyed) return;
      socket.end();
      socket.setTimeout(0);
      setTimeout(() => socket.destroy(), END_GRACE_MS).unref();
    },
    destroy() {
      socket.destroy();
    },
  };
  const connection = new Http2Connection({ ...options, transport });
  socket.setNoDelay(true);
  socket.on('data', (chunk: Buffer) => connection.receive(chunk));
  socket.on('drain', () => connection.transportDrained());
  socket.on('error', () => {});
  socket.on('close', () => connection.transportClosed());
  if (head !== undefined && head.length > 0) connection.receive(head);
  // A sniffed socket was paused with its first bytes put back: they are read now.
  socket.resume();
  return connection;
}
