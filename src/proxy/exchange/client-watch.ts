import type { Socket } from 'node:net';

/** Something in flight on a client connection that must stop when the client goes away. */
export interface ClientBound {
  clientClosed(): void;
}

const kActive = Symbol('clusterset-gateway.active');

type WatchedSocket = Socket & { [kActive]?: ClientBound | ClientBound[] | null };

function onSocketClose(this: WatchedSocket): void {
  const active = this[kActive];
  this[kActive] = null;
  if (active === undefined || active === null) return;
  if (Array.isArray(active)) for (const bound of active) bound.clientClosed();
  else active.clientClosed();
}

/**
 * Registers work in flight on a client connection. One 'close' listener per connection (installed on first
 * use) instead of one per request: the hot path adds no listener and allocates nothing. Pipelined requests
 * share the connection, hence the list.
 */
export function watchClient(socket: Socket, bound: ClientBound): void {
  const s = socket as WatchedSocket;
  const active = s[kActive];
  if (active === undefined) {
    // 'close' comes once: `on` spares the wrapper `once` makes, per request on HTTP/2 (one stream each).
    s.on('close', onSocketClose);
    s[kActive] = bound;
  } else if (active === null) {
    s[kActive] = bound;
  } else if (Array.isArray(active)) {
    active.push(bound);
  } else {
    s[kActive] = [active, bound];
  }
  if (socket.destroyed) onSocketClose.call(s);
}

export function unwatchClient(socket: Socket, bound: ClientBound): void {
  const s = socket as WatchedSocket;
  const active = s[kActive];
  if (active === bound) s[kActive] = null;
  else if (Array.isArray(active)) {
    const i = active.indexOf(bound);
    if (i !== -1) active.splice(i, 1);
    if (active.length === 0) s[kActive] = null;
  }
}
