import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { Exchange } from './forward-exchange.ts';

export type Direction = 'north-south' | 'east-west';

/** Status logged for a response the client did not wait for (nginx's convention, as in the metrics). */
const CLIENT_CLOSED = 499;

/**
 * The access log (`--access-log`): one pino line per request, written when the response ends, for both
 * directions. It carries who called (the peer address as seen on the socket: for east-west traffic through
 * a node-local proxy, the calling pod; X-Forwarded-For is not trusted), what it called, and where it went:
 * the BackendCluster and the cluster and zone of the endpoint that answered. Off by default: a log line
 * costs more than the rest of a small request.
 */
export class AccessLog {
  readonly #logger: Logger;

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  /**
   * Logs the request once its response is finished or cut. `service` names what the client asked for
   * (`<svc>.<ns>.svc.clusterset.local:<port>` east-west, the Host north-south).
   */
  observe(
    direction: Direction,
    req: IncomingMessage,
    res: ServerResponse,
    startMs: number,
    service: string | undefined,
    exchange: Exchange | undefined,
  ): void {
    const socket = req.socket;
    const address = socket?.remoteAddress ?? '';
    const sourcePort = socket?.remotePort;
    res.once('close', () => {
      const endpoint = exchange?.endpoint;
      this.#logger.info(
        {
          direction,
          source: address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address,
          sourcePort,
          method: req.method,
          service,
          path: originForm(req.url ?? ''),
          backend: exchange?.backend?.id,
          endpoint: endpoint?.key,
          cluster: endpoint?.cluster,
          zone: endpoint?.zone,
          status: res.writableFinished ? res.statusCode : CLIENT_CLOSED,
          durationMs: Math.round((performance.now() - startMs) * 1000) / 1000,
        },
        'access',
      );
    });
  }
}

/** The path and query of a target, also when it came in absolute form (`http://host/path`). */
function originForm(target: string): string {
  if (target.charCodeAt(0) === 47 /* / */) return target;
  const rest = target.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i, '');
  return rest === '' ? '/' : rest.charCodeAt(0) === 63 /* ? */ ? `/${rest}` : rest;
}
