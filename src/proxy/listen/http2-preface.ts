import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/** A client speaking HTTP/2 with prior knowledge opens with this connection preface (RFC 9113 §3.4). */
const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

/** How long a connection may stay silent before its first bytes tell its protocol (http.Server's headersTimeout). */
const SNIFF_TIMEOUT_MS = 60_000;

/** True when `head` opens with the HTTP/2 preface, false when it cannot, undefined when too short to tell. */
export function opensWithPreface(head: Buffer): boolean | undefined {
  const n = Math.min(head.length, PREFACE.length);
  for (let i = 0; i < n; i++) if (head[i] !== PREFACE[i]) return false;
  return n === PREFACE.length ? true : undefined;
}

/**
 * Reads the first bytes of a cleartext connection, puts them back, and hands the socket to `route` with the
 * protocol they show: once per connection, so HTTP/1 requests on a kept-alive connection pay nothing more.
 * A connection that ends, fails or stays silent before it can be told is destroyed and given to `dropped`.
 */
export function sniffCleartext(
  socket: Socket,
  route: (socket: Socket, h2: boolean) => void,
  dropped: (socket: Socket) => void,
): void {
  let head: Buffer | undefined;
  const stop = (): void => {
    socket.off('data', onData);
    socket.off('end', onGone);
    socket.off('error', onGone);
    socket.off('timeout', onGone);
    socket.setTimeout(0);
  };
  function onGone(): void {
    stop();
    socket.destroy();
    dropped(socket);
  }
  function onData(chunk: Buffer): void {
    head = head === undefined ? chunk : Buffer.concat([head, chunk]);
    const h2 = opensWithPreface(head);
    if (h2 === undefined) return;
    stop();
    // Paused, the bytes wait in the buffer for the next owner: an HTTP/2 session reads them itself, an HTTP/1
    // parser once the socket is resumed.
    socket.pause();
    socket.unshift(head);
    route(socket, h2);
  }
  socket.on('data', onData);
  socket.on('end', onGone);
  socket.on('error', onGone);
  socket.on('timeout', onGone);
  socket.setTimeout(SNIFF_TIMEOUT_MS);
}

/**
 * Puts a protocol switch in front of a cleartext HTTP/1 server's own connection handling: a connection that
 * opens with the HTTP/2 preface goes to `http2`, any other to the server's HTTP/1 parser, which keeps owning
 * the listening socket (keep-alive, timeouts, upgrades, idle tracking stay as they are). `sniffing` holds the
 * connections not told yet, for the owner to cut on close. Returns the hand-off to the HTTP/1 parser, for a
 * connection that comes back to it (after a refused upgrade). `lean`, when given, takes HTTP/1 connections first
 * (lean-http1-server.ts) and gives them to the server's parser itself when it must.
 */
export function splitCleartextConnections(
  server: Server,
  http2: { accept(socket: Socket): void },
  sniffing: Set<Socket>,
  lean?: { accept(socket: Socket): void },
): (socket: Socket) => void {
  const http1 = server.listeners('connection') as ((socket: Socket) => void)[];
  server.removeAllListeners('connection');
  const route = (socket: Socket, h2: boolean): void => {
    sniffing.delete(socket);
    if (h2) {
      http2.accept(socket);
      return;
    }
    if (lean !== undefined) {
      lean.accept(socket);
      return;
    }
    toNode(socket);
  };
  const toNode = (socket: Socket): void => {
    for (const listener of http1) listener.call(server, socket);
    socket.resume();
  };
  const dropped = (socket: Socket): void => {
    sniffing.delete(socket);
  };
  server.on('connection', (socket: Socket) => {
    sniffing.add(socket);
    sniffCleartext(socket, route, dropped);
  });
  return toNode;
}
