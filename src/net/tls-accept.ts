import { Socket } from 'node:net';
import type { Server as TlsServer } from 'node:tls';

/** The parts of libuv's TCP handle (net's `_handle`) that an accept touches. */
interface TcpHandle {
  close(callback?: () => void): void;
  setNoDelay?(enable: boolean): void;
  setKeepAlive?(enable: boolean, initialDelaySeconds: number): void;
}

/** The listening handle: net calls its `onconnection` for every accepted connection (also under node:cluster). */
interface ListeningHandle {
  onconnection?: (this: ListeningHandle, err: number, client: TcpHandle | undefined) => void;
}

/** net.Server's bookkeeping that `close()` and `getConnections()` read. */
interface ServerInternals {
  _handle?: ListeningHandle | null;
  _connections: number;
  _emitCloseIfDrained?(): void;
  maxConnections?: number | null;
  noDelay?: boolean;
  keepAlive?: boolean;
  keepAliveInitialDelay?: number;
  allowHalfOpen?: boolean;
}

/**
 * Lets a listening node:tls server build one stream object per accepted connection instead of two.
 *
 * net wraps every accepted TCP handle in a `net.Socket`, then node:tls wraps that socket's handle in a
 * `TLSSocket` and keeps the first socket only to close the handle through it: two Duplex streams, their
 * states, listeners and close events per connection, which on one-request connections (a new TLS connection per
 * request) was a tenth of the gateway's busy time. Here the accepted handle goes to node:tls's own connection
 * listener inside a stand-in that only carries the handle, so node:tls still does everything it does (the
 * handshake, its callbacks, its events, its errors), and closing the TLS socket closes the handle directly
 * (the path node:tls takes when the outer socket no longer holds the handle). net's accounting (`_connections`,
 * read by `close()` and `getConnections()`), `noDelay` and `keepAlive` are kept here.
 *
 * Call it once the server listens. It leaves net's accept in place (and returns false) unless the server looks
 * as this was written for: one `connection` listener (node:tls's), a listening handle with `onconnection`; a
 * server with `maxConnections` keeps net's accept for the connections it refuses. The server no longer emits
 * `connection` (there is no net socket to emit); `secureConnection` and `tlsClientError` are as before.
 */
export function acceptTlsHandlesDirectly(server: TlsServer): boolean {
  const internals = server as unknown as ServerInternals;
  const handle = internals._handle;
  const original = handle?.onconnection;
  const listeners = server.listeners('connection');
  const tlsListener = listeners[0];
  if (handle == null || typeof original !== 'function' || listeners.length !== 1 || tlsListener === undefined)
    return false;
  const release = (): void => {
    internals._connections--;
    internals._emitCloseIfDrained?.();
  };
  handle.onconnection = function onTlsConnection(err, client) {
    const limit = internals.maxConnections;
    if (err !== 0 || client === undefined || (limit !== undefined && limit !== null)) {
      original.call(this, err, client);
      return;
    }
    if (internals.noDelay === true) client.setNoDelay?.(true);
    // net.Server stores the delay in seconds already (its constructor divides the option by 1000).
    if (internals.keepAlive === true) client.setKeepAlive?.(true, internals.keepAliveInitialDelay ?? 0);
    internals._connections++;
    countCloseOnce(client, release);
    const carrier = handleCarrier(client, internals.allowHalfOpen === true);
    tlsListener.call(server, carrier);
    // From now on node:tls closes the handle itself (TLSWrap.close: the carrier no longer holds it).
    carrier._handle = undefined;
  };
  return true;
}

/** The connection leaves net's count when its handle closes (the TLS socket's destroy closes it, once). */
function countCloseOnce(handle: TcpHandle, release: () => void): void {
  const close = handle.close;
  let released = false;
  handle.close = function closeAndRelease(callback) {
    if (!released) {
      released = true;
      release();
    }
    close.call(this, callback);
  };
}

/**
 * What node:tls's `TLSSocket` constructor reads of the socket it wraps: a `net.Socket` (by prototype) holding a
 * connected handle, with nothing buffered, not connecting, no parent. Nothing ever emits on a carrier, so the
 * `'connect'`/`'close'`/`'error'` listeners node:tls adds to it are dropped instead of kept. Everything but the
 * handle lives on two shared prototypes (with and without half-open), so a carrier is one small object.
 */
const carrierBase: object = Object.create(Socket.prototype, {
  readableLength: { value: 0 },
  writableLength: { value: 0 },
  connecting: { value: false },
  _parent: { value: null },
  on: { value: ignoreListener },
  once: { value: ignoreListener },
});
const halfOpenCarrier: object = Object.create(carrierBase, { allowHalfOpen: { value: true } });
const closingCarrier: object = Object.create(carrierBase, { allowHalfOpen: { value: false } });

function ignoreListener<T>(this: T): T {
  return this;
}

function handleCarrier(
  handle: TcpHandle,
  allowHalfOpen: boolean,
): Socket & { _handle: TcpHandle | undefined } {
  const carrier = Object.create(allowHalfOpen ? halfOpenCarrier : closingCarrier) as Socket & {
    _handle: TcpHandle | undefined;
  };
  carrier._handle = handle;
  return carrier;
}
