import { STATUS_CODES } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import type { UpstreamEndpoint } from '../../ir/route-table.ts';
import type { Layer4Metrics } from '../../metrics/layer4-metrics.ts';
import type { CompiledBackend } from '../compile/compile-backends.ts';
import { EAST_WEST_GATEWAY } from '../compile/east-west-compile.ts';
import { hostForMatching } from '../exchange/request-host.ts';
import { relay } from '../upstream/byte-relay.ts';
import { dialForClient, type TunnelConnectors } from '../upstream/endpoint-dial.ts';
import { serviceHostname } from './east-west-authority.ts';

export interface EastWestConnectOptions {
  /** How long one connect to an endpoint may take before the next one is tried (`--tcp-connect-timeout-ms`). */
  readonly connectTimeoutMs: number;
  /** A tunnel with no byte either way for this long is closed (`--tcp-idle-timeout-ms`). */
  readonly idleTimeoutMs: number;
  /** Endpoints tried per CONNECT before the client is answered 502. */
  readonly maxConnectAttempts: number;
  /** Endpoints on another network: a CONNECT stream through their network gateway carries the bytes. */
  readonly tunnels?: TunnelConnectors;
  /** The read buffer each upstream connection holds for its life (`--layer4-read-buffer-bytes`); default 64 KiB. */
  readonly readBufferBytes?: number;
}

export const DEFAULT_EAST_WEST_CONNECT: EastWestConnectOptions = {
  connectTimeoutMs: 5_000,
  idleTimeoutMs: 3_600_000,
  maxConnectAttempts: 3,
};

/** Why a CONNECT was answered without a tunnel (`clusterset_gateway_east_west_refused_total{reason}`). */
export type ConnectRefusal =
  | 'connect-bad-authority'
  | 'connect-unknown-service'
  | 'connect-no-endpoint'
  | 'connect-failed';

/** What the listener gives the tunnel for one CONNECT: its service table, as compiled now. */
export interface ConnectTable {
  readonly connect: ReadonlyMap<string, CompiledBackend | null>;
  readonly addresses: ReadonlyMap<string, string>;
}

export interface ConnectServices {
  readonly logger: Logger;
  readonly metrics: Layer4Metrics;
  readonly refuse: (reason: ConnectRefusal) => void;
  /** Tracks the tunnel's sockets so that the listener's close cuts them after the drain. */
  readonly track: (socket: Duplex) => void;
}

/** The client side of one CONNECT: its byte stream, and how it is told yes or no (HTTP/1.1 or HTTP/2). */
export interface ConnectClient {
  readonly socket: Duplex;
  established(): void;
  refuse(status: number, text: string): void;
}

/** An HTTP/1.1 CONNECT: the socket the server handed over; the answers are written on it as they are. */
export function http1ConnectClient(socket: Duplex): ConnectClient {
  return {
    socket,
    established: () => socket.write(ESTABLISHED),
    refuse: (status, text) => reply(socket, `${status} ${STATUS_CODES[status] ?? ''}`, text),
  };
}

/** An HTTP/2 CONNECT stream (RFC 9113 §8.5): the stream is the tunnel once it is answered 200. */
export function http2ConnectClient(req: Http2ServerRequest, res: Http2ServerResponse): ConnectClient {
  const stream = req.stream;
  return {
    socket: stream,
    established: () => stream.respond({ ':status': 200 }),
    refuse: (status, text) => {
      if (stream.destroyed || stream.headersSent) {
        stream.destroy();
        return;
      }
      res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(`${text}\n`);
    },
  };
}

/** `host:port` of an authority-form target (RFC 9112 §3.2.3); a port is required. */
const AUTHORITY = /^(\[[0-9A-Fa-f:.]+\]|[^\s:[\]/@?#]+):(\d{1,5})$/;

const ESTABLISHED = 'HTTP/1.1 200 Connection Established\r\n\r\n';

/**
 * `CONNECT <svc>.<ns>.svc.clusterset.local:<port>` on the east-west listener (docs/east-west.md): a byte tunnel
 * to the service, as a TCPRoute connection would be: its backend's balancer picks the endpoint (locality
 * tiers, ClusterSelectionPolicy boundaries, health), a failed connect moves to the next endpoint before the
 * client hears anything, and an endpoint on another network is reached by a CONNECT stream through that
 * network's gateway. 200 and then the bytes both ways; 400 for an authority that is not `host:port`, 404 for
 * a name or port the listener does not serve, 503 when the service has no endpoint, 502 when every connect
 * failed. The client's first bytes may arrive with the request (`head`); they are sent on once connected.
 */
export function serveConnect(
  target: string,
  peer: ConnectClient,
  head: Buffer,
  table: ConnectTable,
  options: EastWestConnectOptions,
  services: ConnectServices,
): void {
  const client = peer.socket;
  services.track(client);
  // Bytes the client sends before the 200 (a ClientHello) wait in the socket until the tunnel is up.
  client.pause();
  client.on('error', () => client.destroy());
  // An HTTP server's socket times out by the listener's idle timeout; the tunnel has its own.
  (client as Socket).setTimeout?.(0);
  const match = AUTHORITY.exec(target);
  const host = match ? hostForMatching(match[1] as string) : undefined;
  const port = match ? Number(match[2]) : 0;
  if (host === undefined || host === '' || port < 1 || port > 65535) {
    services.refuse('connect-bad-authority');
    peer.refuse(
      400,
      `CONNECT needs <service>.<namespace>.svc.clusterset.local:<port>, not ${JSON.stringify(target.slice(0, 200))}`,
    );
    return;
  }
  const name = `${serviceHostname(host, table.addresses)}:${port}`;
  const backend = table.connect.get(name);
  if (backend === undefined) {
    services.refuse('connect-unknown-service');
    peer.refuse(
      404,
      `no service ${host}:${port}: CONNECT reaches every ServiceImport port (<service>.<namespace>.svc.clusterset.local:<port>) and the mesh's Services`,
    );
    return;
  }
  if (backend === null) {
    services.refuse('connect-unknown-service');
    peer.refuse(
      404,
      `${host}:${port} is served by mesh routes (HTTP) or has no valid backend: CONNECT tunnels only ports routed to the service itself`,
    );
    return;
  }
  connect(peer, head, name, backend, new Set(), options, services);
}

function connect(
  peer: ConnectClient,
  head: Buffer,
  name: string,
  backend: CompiledBackend,
  tried: Set<string>,
  options: EastWestConnectOptions,
  services: ConnectServices,
): void {
  const client = peer.socket;
  if (client.destroyed) return;
  const endpoint = tried.size < options.maxConnectAttempts ? backend.balancer.pick(tried) : undefined;
  if (endpoint === undefined) {
    const none = tried.size === 0;
    services.refuse(none ? 'connect-no-endpoint' : 'connect-failed');
    services.metrics.connections.inc({
      gateway: EAST_WEST_GATEWAY,
      route: name,
      backend: backend.id,
      cluster: '',
      result: none ? 'no-endpoint' : 'connect-failed',
    });
    if (none) peer.refuse(503, `no healthy endpoint of ${name}`);
    else peer.refuse(502, `no endpoint of ${name} could be connected (${tried.size} tried)`);
    return;
  }
  tried.add(endpoint.key);
  dialForClient(client, backend.balancer, endpoint, options, {
    failed: () => {
      services.metrics.connectFailures.inc({ route: name, backend: backend.id, cluster: endpoint.cluster });
      connect(peer, head, name, backend, tried, options, services);
    },
    connected: (upstream) => tunnel(peer, head, upstream, name, backend, endpoint, options, services),
  });
}

function tunnel(
  peer: ConnectClient,
  head: Buffer,
  upstream: Duplex,
  name: string,
  backend: CompiledBackend,
  endpoint: UpstreamEndpoint,
  options: EastWestConnectOptions,
  services: ConnectServices,
): void {
  services.track(upstream);
  const labels = { route: name, backend: backend.id, cluster: endpoint.cluster };
  services.metrics.connections.inc({ ...labels, gateway: EAST_WEST_GATEWAY, result: 'relayed' });
  const open = services.metrics.openConnections.labels({ route: name });
  open.inc();
  peer.established();
  relay(peer.socket, upstream, {
    head,
    idleTimeoutMs: options.idleTimeoutMs,
    closed: (bytes) => {
      open.dec();
      services.metrics.bytes.inc({ ...labels, protocol: 'tcp', direction: 'upstream' }, bytes.upstream);
      services.metrics.bytes.inc({ ...labels, protocol: 'tcp', direction: 'downstream' }, bytes.downstream);
    },
  });
}

function reply(client: Duplex, status: string, text: string): void {
  if (!client.writable) {
    client.destroy();
    return;
  }
  const body = `${text}\n`;
  client.end(
    `HTTP/1.1 ${status}\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}
