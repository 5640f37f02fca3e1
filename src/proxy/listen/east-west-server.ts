import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { Counter, type Registry } from 'prom-client';
import { Layer4Metrics } from '../../metrics/layer4-metrics.ts';
import { EAST_WEST_REFUSED } from '../../metrics/request-metrics.ts';
import type { CompiledEastWest } from '../compile/east-west-compile.ts';
import type { AccessLog } from '../exchange/access-log.ts';
import type { ExchangeServices } from '../exchange/forward-exchange.ts';
import { sendLocalReply } from '../exchange/local-reply.ts';
import { matchRequest } from '../exchange/match-request.ts';
import { serveAction } from '../exchange/serve-request.ts';
import { requestAuthority, serviceHostname } from './east-west-authority.ts';
import {
  type ConnectServices,
  DEFAULT_EAST_WEST_CONNECT,
  type EastWestConnectOptions,
  http1ConnectClient,
  http2ConnectClient,
  serveConnect,
} from './east-west-connect.ts';
import { ListenerCore } from './listener-core.ts';
import { DEFAULT_LISTENER_LIMITS, type ListenerLimits, refusalForParseError } from './request-guard.ts';
import { serveUpgrade } from './upgrade-tunnel.ts';

export interface EastWestServerOptions {
  readonly services: ExchangeServices;
  readonly registry: Registry;
  readonly accessLog?: AccessLog;
  /** The same client-side limits and timeouts as the Gateway listener ports. */
  readonly limits?: ListenerLimits;
  /** CONNECT tunnels: connect timeout, attempts, idle timeout, and the tunnels to other networks. */
  readonly connect?: EastWestConnectOptions;
}

/** Why a connection was refused before it became a request (`clusterset_gateway_east_west_refused_total`). */
const REFUSED_REASONS = [
  'tls',
  'not-http',
  'connect-bad-authority',
  'connect-unknown-service',
  'connect-no-endpoint',
  'connect-failed',
] as const;
type RefusedReason = (typeof REFUSED_REASONS)[number];

const TLS_HANDSHAKE = 0x16;

const HOSTNAME_HINT =
  '<service>.<namespace>.svc.cluster.local[:port] and <service>.<namespace>.svc.clusterset.local[:port]';

/** What an east-west request names in the access log: `<host>:<port>` of its authority. */
function requestedService(req: IncomingMessage): string | undefined {
  const authority = requestAuthority(req);
  return authority === undefined ? undefined : `${authority.host}:${authority.port}`;
}

function rawReply(socket: Duplex, status: string, text: string, extra = ''): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const body = `${text}\n`;
  socket.end(
    `HTTP/1.1 ${status}\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n${extra}\r\n${body}`,
  );
}

/**
 * The east-west listener (`--east-west-port`): a sidecarless proxy for calls between services of the
 * clusterset. A request names `<svc>.<ns>.svc.cluster.local[:port]` (or a short form, or a ClusterIP) or
 * `<svc>.<ns>.svc.clusterset.local[:port]` in its Host or, sent through the
 * proxy the HTTP_PROXY way, in an absolute-form target; the port (default 80) selects the service port and
 * the north-south machinery does the rest (route matching, filters, weights, retries, locality tiers,
 * failover, metrics under `gateway="east-west"`). `CONNECT <name>:<port>` opens a byte tunnel to the service
 * (east-west-connect.ts: a pod's own TLS passes through it). What is not HTTP (a TLS ClientHello, random bytes)
 * is refused with 400 and a closed connection, counted by reason.
 */
export class EastWestServer {
  readonly #core: ListenerCore;
  readonly #services: ExchangeServices;
  readonly #refused: Counter<'reason'>;
  #compiled: CompiledEastWest;
  #boundPort = 0;

  constructor(options: EastWestServerOptions, compiled: CompiledEastWest) {
    const accessLog = options.accessLog;
    this.#services =
      accessLog === undefined
        ? options.services
        : { ...options.services, accessLog: accessLog.forListener('east-west', requestedService) };
    this.#compiled = compiled;
    const existing = options.registry.getSingleMetric(EAST_WEST_REFUSED.name);
    this.#refused =
      (existing as Counter<'reason'> | undefined) ??
      new Counter({
        ...EAST_WEST_REFUSED,
        labelNames: [...EAST_WEST_REFUSED.labelNames],
        registers: [options.registry],
      });
    for (const reason of REFUSED_REASONS) this.#refused.labels(reason).inc(0);

    const connectOptions = options.connect ?? DEFAULT_EAST_WEST_CONNECT;
    const connectServices: ConnectServices = {
      logger: options.services.logger,
      metrics: new Layer4Metrics(options.registry),
      refuse: (reason) => this.#refuse(reason),
      track: (socket) => this.#core.trackTunnel(socket),
    };
    // gRPC between services speaks HTTP/2 with prior knowledge (h2c): the core's cleartext split takes it.
    this.#core = new ListenerCore({
      limits: options.limits ?? DEFAULT_LISTENER_LIMITS,
      logger: options.services.logger,
      rejections: options.services.rejections,
      detail: { listener: 'east-west' },
      serve: (req, res) => this.#serve(req, res),
      connectHttp2: (req, res) => {
        const authority = req.headers[':authority'];
        serveConnect(
          typeof authority === 'string' ? authority : '',
          http2ConnectClient(req, res),
          Buffer.alloc(0),
          this.#compiled,
          connectOptions,
          connectServices,
        );
      },
      upgrade: (req, socket, head, resume) => {
        const authority = requestAuthority(req);
        const port = authority === undefined ? undefined : this.#compiled.ports.get(authority.port);
        if (port === undefined) {
          rawReply(socket, '404 Not Found', this.#unknownMessage(authority));
          return;
        }
        serveUpgrade(
          port,
          req,
          socket,
          head,
          this.#services,
          serviceHostname(authority!.host, this.#compiled.addresses),
          resume,
        );
      },
      refuseParseError: (err, socket) => {
        if (err.rawPacket?.[0] === TLS_HANDSHAKE) {
          this.#refuse('tls');
          rawReply(socket, '400 Bad Request', 'this is a plain HTTP listener: TLS is not accepted here');
          return true;
        }
        // A request over a limit (431, 408) or badly framed is refused as on the Gateway listeners (the
        // core's answer); anything else is not HTTP.
        const refusal = refusalForParseError(err.code, err.rawPacket);
        if (refusal.status !== 400 || refusal.reason === 'invalid message framing') return false;
        this.#refuse('not-http');
        rawReply(
          socket,
          '400 Bad Request',
          `not an HTTP/1.1 request; the east-west listener serves HTTP for ${HOSTNAME_HINT}`,
        );
        return true;
      },
    });
    this.#core.server.on('connect', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      serveConnect(
        req.url ?? '',
        http1ConnectClient(socket),
        head,
        this.#compiled,
        connectOptions,
        connectServices,
      );
    });
  }

  get boundPort(): number {
    return this.#boundPort;
  }

  swap(compiled: CompiledEastWest): void {
    this.#compiled = compiled;
  }

  async listen(host: string, port: number): Promise<number> {
    this.#boundPort = await this.#core.listen(host, port);
    return this.#boundPort;
  }

  /**
   * Stops accepting, lets requests in flight finish within `drainMs` (answers say `Connection: close`), then
   * cuts what is left.
   */
  close(drainMs: number): Promise<void> {
    return this.#core.close(drainMs);
  }

  #refuse(reason: RefusedReason): void {
    this.#refused.labels(reason).inc();
  }

  #serve(req: IncomingMessage, res: ServerResponse): void {
    const startMs = performance.now();
    const compiled = this.#compiled;
    const authority = requestAuthority(req);
    const port = authority === undefined ? undefined : compiled.ports.get(authority.port);
    const view =
      port === undefined
        ? undefined
        : matchRequest(port, req, serviceHostname(authority!.host, compiled.addresses), this.#services.paths);
    const action = view?.action;
    if (view === undefined || action === undefined) {
      let status = 404;
      let text: string;
      let extra: string[] | undefined;
      if (view?.location !== undefined) {
        status = view.status;
        text = String(status);
        extra = ['location', view.location];
      } else if (view?.status === 400 && view.reason !== '') {
        status = 400;
        text = view.reason;
      } else if (authority === undefined || view?.status === 400) {
        status = 400;
        text = `the request names no valid host; the east-west listener serves ${HOSTNAME_HINT}`;
      } else if (view?.listener === undefined) {
        text = this.#unknownMessage(authority);
      } else {
        text = `no route of ${authority!.host}:${authority!.port} matches ${req.method} ${view.path} (the service's HTTPRoutes replace its default route)`;
      }
      const bytes = sendLocalReply(res, status, text, extra);
      compiled.noRouteSeries.record(status, (performance.now() - startMs) / 1000);
      this.#services.accessLog?.answered(req, res.statusCode, bytes, startMs);
      return;
    }
    serveAction(this.#services, view, action, req, res, startMs);
  }

  #unknownMessage(authority: { readonly host: string; readonly port: number } | undefined): string {
    if (authority === undefined) {
      return `the request names no valid host; the east-west listener serves ${HOSTNAME_HINT}`;
    }
    const name = `${authority.host}:${authority.port}`;
    const service = serviceHostname(authority.host, this.#compiled.addresses);
    if (service.endsWith('.svc.clusterset.local')) {
      return `no service ${name} in the clusterset: east-west serves every ServiceImport port and every port of the mesh's Services`;
    }
    return service.endsWith('.svc.cluster.local')
      ? `no service ${name}: east-west serves every port of the mesh's Services (those --mesh-namespaces and the clusterset-gateway.io/mesh label leave in)`
      : `unknown host ${name}: the east-west listener serves ${HOSTNAME_HINT} (and <service>.<namespace>, ClusterIPs)`;
  }
}
