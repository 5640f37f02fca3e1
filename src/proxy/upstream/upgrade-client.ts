import { type ClientRequest, request as httpRequest, type IncomingMessage } from 'node:http';
import { connect as netConnect, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { UpstreamFailure } from './attempt-outcome.ts';
import { undiciFailureKind } from './undici-failure.ts';

/** Opens one connection to an endpoint (plain, TLS or through another network's tunnel): a Duplex, or an error. */
export type OpenConnection = (callback: (err: Error | null, socket: Duplex | null) => void) => void;

/** An upgrade request as it goes upstream: Connection and Upgrade kept, the route's header ops applied. */
export interface UpgradeRequest {
  readonly method: string;
  readonly path: string;
  /** Flat `[name, value, ...]`. */
  readonly headers: readonly string[];
}

/**
 * What an upgrade's outcome reaches: the attempt (upstream-attempt.ts), as undici's handler callbacks do for any
 * request, plus `onUpgrade` with the connection once the endpoint answered 101 (the bytes it sent past its head
 * put back in front).
 */
export interface UpgradeHandler {
  onConnect(abort: (err?: Error) => void): void;
  onUpgrade(statusCode: number, rawHeaders: string[], socket: Duplex): void;
  onHeaders(statusCode: number, rawHeaders: string[], resume: () => void): boolean;
  onData(chunk: Buffer): boolean;
  onComplete(trailers?: null): void;
  onError(err: Error): void;
}

const RESET_MID_BODY = 'ECONNRESET';

/** A plain TCP connection within `timeoutMs` (no TLS and no tunnel, so nothing of undici is loaded for it). */
export function plainConnection(address: string, port: number, timeoutMs: number): OpenConnection {
  return (callback) => {
    const socket = netConnect({ host: address, port });
    const failed = (err: Error): void => {
      socket.destroy();
      callback(err, null);
    };
    socket.setTimeout(timeoutMs, () =>
      failed(new UpstreamFailure('connect-timeout', `connect timeout after ${timeoutMs} ms`)),
    );
    socket.once('error', failed);
    socket.once('connect', () => {
      socket.setTimeout(0);
      socket.off('error', failed);
      socket.setNoDelay(true);
      callback(null, socket);
    });
  };
}

/**
 * Sends one upgrade request (WebSocket and the like) on a connection of its own, never pooled: after a 101 that
 * connection is the tunnel, and after any other answer it is closed. Node's HTTP client writes the request and
 * parses the answer on the connection `open` gives it, so every header name and value is validated as the other
 * clients validate them; its failures reach `handler` in the data plane's taxonomy (attempt-outcome.ts), as
 * undici's do (undici-failure.ts).
 */
export function sendUpgrade(open: OpenConnection, request: UpgradeRequest, handler: UpgradeHandler): void {
  let connected = false;
  let responded = false;
  let done = false;
  const fail = (err: Error): void => {
    if (done) return;
    done = true;
    handler.onError(
      err instanceof UpstreamFailure
        ? err
        : new UpstreamFailure(undiciFailureKind(err, connected, responded), err.message, err),
    );
  };
  let upstream: ClientRequest;
  try {
    upstream = httpRequest({
      method: request.method,
      path: request.path,
      headers: request.headers as string[],
      setHost: false,
      createConnection: (_options, created) => {
        open((err, socket) => {
          if (err !== null || socket === null) {
            created(err ?? new Error('no connection'), undefined as unknown as Socket);
            return;
          }
          connected = true;
          handler.onConnect((reason) => upstream.destroy(reason));
          created(null, socket as Socket);
        });
        return undefined;
      },
    });
  } catch (err) {
    // A header or path no request can carry: the gateway's own error, raised before any connection.
    fail(err as Error);
    return;
  }
  upstream.on('error', fail);
  upstream.on('upgrade', (res: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (done) {
      socket.destroy();
      return;
    }
    responded = true;
    done = true;
    if (head.length > 0) socket.unshift(head);
    handler.onUpgrade(res.statusCode ?? 101, res.rawHeaders, socket);
  });
  upstream.on('response', (res: IncomingMessage) => {
    if (done) {
      res.destroy();
      return;
    }
    responded = true;
    if (!handler.onHeaders(res.statusCode ?? 502, res.rawHeaders, () => res.resume())) {
      done = true;
      upstream.destroy();
      return;
    }
    res.on('data', (chunk: Buffer) => {
      if (!done && !handler.onData(chunk)) res.pause();
    });
    res.once('end', () => {
      if (done) return;
      done = true;
      handler.onComplete(null);
      // The connection served this one answer: it is never reused.
      upstream.destroy();
    });
    res.on('error', fail);
    res.once('close', () => {
      if (!res.complete)
        fail(
          Object.assign(new Error('upstream closed the refused upgrade mid-body'), { code: RESET_MID_BODY }),
        );
    });
  });
  upstream.end();
}
