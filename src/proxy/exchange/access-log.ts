import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import type { UpstreamEndpoint } from '../../ir/route-table.ts';
import type { FailureKind } from '../upstream/attempt-outcome.ts';

export type Direction = 'north-south' | 'east-west';

/** What a forwarded request's exchange (forward-exchange.ts) knows of it once it ended. */
export interface ExchangeRecord {
  readonly req: IncomingMessage;
  /** The status the client got (499: it left before the answer ended). */
  readonly loggedStatus: number;
  /** Response body bytes sent to the client. */
  readonly bytes: number;
  readonly startMs: number;
  readonly backendId: string | undefined;
  /** The endpoint of the last attempt; undefined when none was picked. */
  readonly endpoint: UpstreamEndpoint | undefined;
  /** Attempts made (retries included). */
  readonly attempts: number;
  /** How the last attempt failed, when it did. */
  readonly failure: FailureKind | undefined;
}

/**
 * The access log (`--access-log`): one pino line per request, for both directions and every server path (the lean
 * HTTP/1.1 one, Node's HTTP/1 and HTTP/2). Written from the request's own record when it ends (the exchange's for a
 * forwarded request, the answer's for one the gateway answered itself), never from a server's response events, so
 * every path writes the same line. It carries who called (the peer address as seen on the socket: for east-west
 * traffic through a node-local proxy, the calling pod; X-Forwarded-For is not trusted), what it called, where it
 * went (the BackendCluster, the endpoint that answered, its cluster and zone, the attempts it took and how the last
 * one failed) and what came back. Off by default: a log line costs more than the rest of a small request, and off,
 * nothing of it runs per request.
 */
export class AccessLog {
  readonly #logger: Logger;

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  /**
   * The log of one listener. `service` names what a request asked for (`<svc>.<ns>.svc.clusterset.local:<port>`
   * east-west, the Host north-south); it runs only when a line is written.
   */
  forListener(
    direction: Direction,
    service: (req: IncomingMessage) => string | undefined,
  ): ListenerAccessLog {
    return new ListenerAccessLog(this.#logger, direction, service);
  }
}

export class ListenerAccessLog {
  readonly #logger: Logger;
  readonly #direction: Direction;
  readonly #service: (req: IncomingMessage) => string | undefined;

  constructor(logger: Logger, direction: Direction, service: (req: IncomingMessage) => string | undefined) {
    this.#logger = logger;
    this.#direction = direction;
    this.#service = service;
  }

  /** A request the gateway answered itself (no route, redirect, CORS preflight, an invalid backend). */
  answered(req: IncomingMessage, status: number, bytes: number, startMs: number): void {
    this.#write(req, status, bytes, startMs, performance.now(), undefined, undefined, 0, undefined);
  }

  /** A forwarded request whose exchange ended at `endMs`. */
  exchanged(exchange: ExchangeRecord, endMs: number): void {
    this.#write(
      exchange.req,
      exchange.loggedStatus,
      exchange.bytes,
      exchange.startMs,
      endMs,
      exchange.backendId,
      exchange.endpoint,
      exchange.attempts,
      exchange.failure,
    );
  }

  #write(
    req: IncomingMessage,
    status: number,
    bytes: number,
    startMs: number,
    endMs: number,
    backend: string | undefined,
    endpoint: UpstreamEndpoint | undefined,
    attempts: number,
    failure: FailureKind | undefined,
  ): void {
    const socket = req.socket;
    const address = socket?.remoteAddress ?? '';
    this.#logger.info(
      {
        direction: this.#direction,
        source: address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address,
        sourcePort: socket?.remotePort,
        method: req.method,
        service: this.#service(req),
        path: originForm(req.url ?? ''),
        backend,
        endpoint: endpoint?.key,
        cluster: endpoint?.cluster,
        zone: endpoint?.zone,
        status,
        bytes,
        attempts,
        failure,
        durationMs: Math.round((endMs - startMs) * 1000) / 1000,
      },
      'access',
    );
  }
}

/** The path and query of a target, also when it came in absolute form (`http://host/path`). */
function originForm(target: string): string {
  if (target.charCodeAt(0) === 47 /* / */) return target;
  const rest = target.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i, '');
  return rest === '' ? '/' : rest.charCodeAt(0) === 63 /* ? */ ? `/${rest}` : rest;
}
