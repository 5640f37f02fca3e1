import {
  createServer as createH2Server,
  type Http2Server,
  constants as h2,
  type IncomingHttpHeaders,
  type ServerHttp2Session,
  type ServerHttp2Stream,
} from 'node:http2';
import { connect as netConnect, type Socket } from 'node:net';
import { createServer as createTlsServer, type TLSSocket, type Server as TlsServer } from 'node:tls';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { NetworkGatewayConfig } from '../ir/route-table.ts';
import type { Balancer } from '../lb/balancer.ts';
import {
  NETWORK_GATEWAY_HANDSHAKE_FAILURES,
  NETWORK_GATEWAY_REFUSED,
  type NetworkMetrics,
} from '../metrics/network-metrics.ts';
import { BadInputReporter } from '../net/bad-input.ts';
import { listen } from '../net/listen.ts';
import { handshakeRefusalReason } from '../net/tls-handshake-errors.ts';
import { parseConnectAuthority } from './connect-authority.ts';
import type { NetworkTls, NetworkTlsMaterial } from './network-tls.ts';
import { authorizePeer, certificateRefusal, formatClusterId, type PeerVerdict } from './peer-identity.ts';

export interface NetworkGatewayLimits {
  /** Concurrent CONNECT streams per connection (SETTINGS_MAX_CONCURRENT_STREAMS, and enforced). */
  readonly maxStreams: number;
  /** The TLS handshake must finish within this. */
  readonly handshakeTimeoutMs: number;
  /** A connection, or a tunnel, with no traffic this long is closed. */
  readonly idleTimeoutMs: number;
  /** Connecting to a local endpoint. */
  readonly connectTimeoutMs: number;
  /** Local endpoints tried per stream before answering 503. */
  readonly maxConnectAttempts: number;
}

export const DEFAULT_NETWORK_GATEWAY_LIMITS: NetworkGatewayLimits = {
  maxStreams: 100,
  handshakeTimeoutMs: 10_000,
  idleTimeoutMs: 300_000,
  connectTimeoutMs: 5_000,
  maxConnectAttempts: 3,
};

export interface NetworkGatewayServerOptions {
  readonly host: string;
  readonly port: number;
  readonly tls: NetworkTls;
  /** `--network-allowed-clusters`; absent: every cluster of the trust domain. */
  readonly allowedClusters?: readonly string[];
  readonly limits?: Partial<NetworkGatewayLimits>;
  readonly logger: Logger;
  readonly registry: Registry;
  readonly metrics: NetworkMetrics;
}

/** The header a refusal carries, so the peer (and its operator) can tell why without our logs. */
export const REFUSAL_HEADER = 'clusterset-gateway-refusal';

interface PeerState {
  readonly verdict: PeerVerdict;
  streams: number;
}

/**
 * The network gateway listener (docs/multi-network.md): mutual TLS only, HTTP/2 only, CONNECT streams only
 * (RFC 9113 §8.5) whose `:authority` is an exported service of this cluster, each relayed as a TCP tunnel to a
 * healthy endpoint of this cluster picked by its balancer (the cluster's own locality tiers). The peer is
 * authenticated by its certificate (the trust bundle) and authorized by its SPIFFE ID (same trust domain, and
 * the allowed clusters when given). Everything else is refused with a status and a reason header, counted by
 * reason and logged at most once per reason per 10 s.
 *
 * The listener verifies the client certificate itself (rejectUnauthorized off, then `authorized` checked before
 * a single HTTP/2 byte is read), so a missing, expired or untrusted certificate is told apart and counted.
 */
export class NetworkGatewayServer {
  readonly #options: NetworkGatewayServerOptions;
  readonly #limits: NetworkGatewayLimits;
  readonly #logger: Logger;
  readonly #metrics: NetworkMetrics;
  readonly #refused: BadInputReporter;
  readonly #handshakes: BadInputReporter;
  readonly #allowed: ReadonlySet<string> | undefined;
  readonly #tlsServer: TlsServer;
  readonly #h2: Http2Server;
  readonly #peers = new WeakMap<ServerHttp2Session, PeerState>();
  readonly #sessions = new Set<ServerHttp2Session>();
  readonly #upstreams = new Set<Socket>();
  readonly #unsubscribe: () => void;
  #services = new Map<string, string>();
  #balancer: (backendId: string) => Balancer | undefined = () => undefined;
  #boundPort = 0;

  constructor(options: NetworkGatewayServerOptions) {
    this.#options = options;
    this.#limits = { ...DEFAULT_NETWORK_GATEWAY_LIMITS, ...options.limits };
    this.#logger = options.logger.child({ component: 'network-gateway' });
    this.#metrics = options.metrics;
    this.#refused = new BadInputReporter(options.registry, this.#logger, NETWORK_GATEWAY_REFUSED);
    this.#handshakes = new BadInputReporter(
      options.registry,
      this.#logger,
      NETWORK_GATEWAY_HANDSHAKE_FAILURES,
    );
    this.#allowed = options.allowedClusters ? new Set(options.allowedClusters) : undefined;
    this.#tlsServer = createTlsServer({
      ...contextOptions(options.tls.material),
      requestCert: true,
      rejectUnauthorized: false,
      ALPNProtocols: ['h2'],
      minVersion: 'TLSv1.2',
      handshakeTimeout: this.#limits.handshakeTimeoutMs,
    });
    this.#unsubscribe = options.tls.onChange((material) =>
      this.#tlsServer.setSecureContext(contextOptions(material)),
    );
    this.#h2 = createH2Server({
      settings: { maxConcurrentStreams: this.#limits.maxStreams, enablePush: false },
    });
    this.#tlsServer.on('tlsClientError', (err, socket) => {
      socket.destroy();
      const reason = handshakeRefusalReason(err as Error & { code?: string });
      if (reason !== undefined) this.#handshakes.report(reason, { remote: socket.remoteAddress });
    });
    this.#tlsServer.on('secureConnection', (socket) => this.#accept(socket));
    this.#h2.on('session', (session) => this.#session(session));
    this.#h2.on('stream', (stream, headers) => this.#stream(stream, headers));
  }

  get boundPort(): number {
    return this.#boundPort;
  }

  async listen(): Promise<number> {
    this.#boundPort = await listen(this.#tlsServer, this.#options.host, this.#options.port);
    this.#logger.info(
      { port: this.#boundPort, id: formatClusterId(this.#options.tls.material.id) },
      'network gateway listening',
    );
    return this.#boundPort;
  }

  /** For /config_dump: the port and every open peer connection, who it is (or why refused) and its open tunnels. */
  describe(): {
    port: number;
    services: number;
    sessions: { peer: string; authorized: boolean; streams: number }[];
  } {
    const sessions = [...this.#sessions].map((session) => {
      const state = this.#peers.get(session);
      const verdict = state?.verdict;
      return {
        peer:
          verdict === undefined ? 'unknown' : verdict.ok ? verdict.id.cluster : `refused: ${verdict.reason}`,
        authorized: verdict?.ok === true,
        streams: state?.streams ?? 0,
      };
    });
    return { port: this.#boundPort, services: this.#services.size, sessions };
  }

  /** The services of the table in force and their balancers (the proxy's, so health is shared). */
  apply(
    config: NetworkGatewayConfig | undefined,
    balancer: (backendId: string) => Balancer | undefined,
  ): void {
    const services = new Map<string, string>();
    for (const service of config?.services ?? []) services.set(service.authority, service.backendId);
    this.#services = services;
    this.#balancer = balancer;
  }

  /** Stops accepting, lets tunnels finish for `drainMs`, then cuts what is left. */
  async close(drainMs: number): Promise<void> {
    this.#unsubscribe();
    const closed = new Promise<void>((resolve) => this.#tlsServer.close(() => resolve()));
    for (const session of this.#sessions) session.close();
    const timer = setTimeout(() => {
      for (const session of this.#sessions) session.destroy();
      for (const upstream of this.#upstreams) upstream.destroy();
    }, drainMs);
    timer.unref();
    await closed;
    clearTimeout(timer);
  }

  /** A finished handshake: authenticated by certificate, then handed to HTTP/2 with its authorization. */
  #accept(socket: TLSSocket): void {
    socket.on('error', () => {});
    if (socket.alpnProtocol !== 'h2') {
      this.#handshakes.report('not-h2', { remote: socket.remoteAddress });
      socket.destroy();
      return;
    }
    const certificate = socket.getPeerCertificate();
    const hasCertificate = certificate !== null && Object.keys(certificate).length > 0;
    const refusal = certificateRefusal(socket.authorized, socket.authorizationError, hasCertificate);
    if (refusal !== undefined) {
      this.#handshakes.report(refusal, { remote: socket.remoteAddress });
      socket.destroy();
      return;
    }
    const verdict = authorizePeer(certificate.subjectaltname, {
      trustDomain: this.#options.tls.material.id.trustDomain,
      ...(this.#allowed ? { allowedClusters: this.#allowed } : {}),
    });
    (socket as TLSSocket & { peerVerdict?: PeerVerdict }).peerVerdict = verdict;
    this.#h2.emit('connection', socket);
  }

  #session(session: ServerHttp2Session): void {
    const socket = session.socket as TLSSocket & { peerVerdict?: PeerVerdict };
    const verdict = socket.peerVerdict ?? { ok: false, reason: 'no-spiffe-id' };
    this.#peers.set(session, { verdict, streams: 0 });
    this.#sessions.add(session);
    this.#metrics.sessions.inc({ direction: 'inbound' });
    session.setTimeout(this.#limits.idleTimeoutMs, () => session.close());
    session.on('error', () => {});
    session.once('close', () => {
      this.#sessions.delete(session);
      this.#metrics.sessions.dec({ direction: 'inbound' });
    });
  }

  #stream(stream: ServerHttp2Stream, headers: IncomingHttpHeaders): void {
    stream.on('error', () => {});
    const peer = this.#peers.get(stream.session as ServerHttp2Session);
    if (peer === undefined) {
      stream.close(h2.NGHTTP2_REFUSED_STREAM);
      return;
    }
    if (!peer.verdict.ok) {
      // An authenticated peer this gateway does not serve: said once, then the connection ends.
      this.#refuse(stream, 403, peer.verdict.reason);
      stream.session?.close();
      return;
    }
    const remote = peer.verdict.id.cluster;
    if (peer.streams >= this.#limits.maxStreams) {
      this.#refused.report('stream-limit', { peer: remote });
      stream.close(h2.NGHTTP2_REFUSED_STREAM);
      return;
    }
    const admitted = this.#admit(headers);
    if (!admitted.ok) {
      this.#refuse(stream, admitted.status, admitted.reason, remote);
      return;
    }
    const balancer = admitted.balancer;
    peer.streams++;
    this.#metrics.activeTunnels.inc({ direction: 'inbound' });
    stream.once('close', () => {
      peer.streams--;
      this.#metrics.activeTunnels.dec({ direction: 'inbound' });
    });
    stream.setTimeout(this.#limits.idleTimeoutMs, () => stream.close(h2.NGHTTP2_CANCEL));
    this.#relay(stream, balancer, remote, new Set());
  }

  /** A CONNECT to an exported service of this cluster with a balancer, or the refusal. */
  #admit(
    headers: IncomingHttpHeaders,
  ): { ok: true; balancer: Balancer } | { ok: false; status: number; reason: string } {
    if (headers[':method'] !== 'CONNECT') return { ok: false, status: 405, reason: 'not-connect' };
    if (headers[':protocol'] !== undefined) return { ok: false, status: 400, reason: 'extended-connect' };
    const authority = parseConnectAuthority(headers[':authority']);
    if (!authority.ok) return { ok: false, status: 400, reason: authority.reason };
    const backendId = this.#services.get(authority.authority);
    if (backendId === undefined) return { ok: false, status: 404, reason: 'not-exported' };
    const balancer = this.#balancer(backendId);
    if (balancer === undefined) return { ok: false, status: 503, reason: 'no-healthy-endpoint' };
    return { ok: true, balancer };
  }

  /** Connects to a local endpoint (the next one on a connect failure) and pipes both ways. */
  #relay(stream: ServerHttp2Stream, balancer: Balancer, remote: string, tried: Set<string>): void {
    const endpoint = tried.size >= this.#limits.maxConnectAttempts ? undefined : balancer.pick(tried);
    if (endpoint === undefined) {
      this.#metrics.tunnels.inc({ direction: 'inbound', cluster: remote, result: 'no-endpoint' });
      this.#refuse(stream, 503, 'no-healthy-endpoint', remote);
      return;
    }
    tried.add(endpoint.key);
    const started = performance.now();
    const done = balancer.begin(endpoint);
    const upstream = netConnect({ host: endpoint.address, port: endpoint.port });
    this.#upstreams.add(upstream);
    const timer = setTimeout(
      () => upstream.destroy(new Error('connect timeout')),
      this.#limits.connectTimeoutMs,
    );
    let connected = false;
    upstream.once('connect', () => {
      connected = true;
      clearTimeout(timer);
      done({ result: 'success', latencyMs: performance.now() - started });
      if (stream.destroyed) {
        upstream.destroy();
        return;
      }
      stream.respond({ ':status': 200 });
      this.#metrics.tunnels.inc({ direction: 'inbound', cluster: remote, result: 'relayed' });
      stream.pipe(upstream);
      upstream.pipe(stream);
    });
    upstream.on('error', () => {
      clearTimeout(timer);
      if (!connected) {
        done({ result: 'connect-failure', latencyMs: performance.now() - started });
        upstream.destroy();
        if (!stream.destroyed) this.#relay(stream, balancer, remote, tried);
        return;
      }
      stream.close(h2.NGHTTP2_CONNECT_ERROR);
    });
    upstream.once('close', () => {
      this.#upstreams.delete(upstream);
      if (connected && !stream.destroyed) stream.end();
    });
    stream.once('close', () => {
      if (connected) upstream.end();
      else upstream.destroy();
    });
  }

  #refuse(stream: ServerHttp2Stream, status: number, reason: string, peer?: string): void {
    this.#refused.report(reason, peer !== undefined ? { peer } : {});
    if (stream.destroyed || stream.headersSent) return;
    stream.respond({ ':status': status, [REFUSAL_HEADER]: reason, 'content-type': 'text/plain' });
    stream.end(`network gateway: ${reason}\n`);
  }
}

function contextOptions(material: NetworkTlsMaterial) {
  return { cert: material.cert, key: material.key, ca: material.ca };
}
