import type { IncomingMessage } from 'node:http';
import type { CompiledListener } from '../compile/compile-listeners.ts';
import type { CompiledPort } from '../compile/compile-table.ts';

/**
 * A request is misdirected when the TLS connection it came on was opened for another listener than the one
 * its Host (HTTP/2 :authority) selects: a client reusing a connection across listeners whose certificates
 * overlap (HTTP/2 connection coalescing, RFC 9113 §9.1.1). It is answered 421 so the client opens a
 * connection of its own for that host (GEP-3567, RFC 9110 §15.5.20). The listener each name selects is the
 * most specific match on this port, so a host under the same wildcard listener as the SNI name is served.
 * A connection without SNI was not opened for any listener in particular and is never misdirected.
 */
export function isMisdirected(
  port: CompiledPort,
  req: IncomingMessage,
  hostListener: CompiledListener | undefined,
): boolean {
  // A TLS socket's `servername` is the SNI name the client sent (false or undefined without one).
  const servername = (req.socket as { servername?: unknown } | undefined)?.servername;
  if (typeof servername !== 'string' || servername === '') return false;
  return port.listeners.select(servername.toLowerCase()) !== hostListener;
}
