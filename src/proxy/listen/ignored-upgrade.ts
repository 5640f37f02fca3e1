import { type IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';

/**
 * `Upgrade: h2c` (HTTP/1.1 to cleartext HTTP/2) is deprecated by RFC 9113 §3.1, and RFC 9110 §7.8 lets a server
 * ignore an upgrade it does not take. Node hands such a request to the 'upgrade' event, with no response object;
 * this serves it as the plain HTTP/1.1 request it also is. Clients that want HTTP/2 without TLS send the
 * preface directly (prior knowledge), which the listener takes.
 */
export function isH2cOnlyUpgrade(req: IncomingMessage): boolean {
  const upgrade = req.headers.upgrade;
  if (typeof upgrade !== 'string') return false;
  return upgrade.split(',').every((token) => token.trim().toLowerCase() === 'h2c');
}

/** Whether the request says it has a body: one that arrives after an upgrade request is not read here. */
function declaresBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * Answers `req` on `socket` through `handle` as an ordinary request, then closes the connection (the parser
 * that read it is gone, so no further request can follow on it). A body-bearing h2c upgrade is refused with
 * 400: its body is no longer framed by Node's parser.
 */
export function serveIgnoringUpgrade(
  req: IncomingMessage,
  socket: Duplex,
  handle: (req: IncomingMessage, res: ServerResponse) => void,
  refuse: (res: ServerResponse, status: number, reason: string) => void,
): void {
  // Node's HTTP server took its own listeners off the socket with the upgrade: a reset must not reach the process.
  socket.on('error', () => socket.destroy());
  delete req.headers.upgrade;
  delete req.headers['http2-settings'];
  const res = new ServerResponse(req);
  res.shouldKeepAlive = false;
  res.assignSocket(socket as Socket);
  res.once('finish', () => {
    res.detachSocket(socket as Socket);
    socket.end();
  });
  if (declaresBody(req)) {
    refuse(res, 400, 'h2c upgrade with a body');
    return;
  }
  handle(req, res);
}
