import {
  type ClientHttp2Session,
  type ClientHttp2Stream,
  constants as h2,
  connect as h2Connect,
} from 'node:http2';
import type { Duplex } from 'node:stream';
import type { PeerCertificate } from 'node:tls';
import type { Logger } from 'pino';
import type { UpstreamEndpoint } from '../ir/route-table.ts';
import type { NetworkMetrics } from '../metrics/network-metrics.ts';
import { REFUSAL_HEADER } from './network-gateway-server.ts';
import type { NetworkTls } from './network-tls.ts';
import { outboundHandshakeReason, SELF_PEER_CODE, WRONG_PEER_CODE } from './outbound-handshake.ts';
import { clusterIdOf, formatClusterId } from './peer-identity.ts';

/** The `connect` function an undici Pool or Client takes: a Duplex to speak HTTP on, or an error. */
export type TunnelConnect = (
  options: object,
  callback: (err: Error | null, socket: Duplex | null) => void,
) => void;

/** How a probe of another network's gateway ended (the health checker's probe results). */
export type GatewayProbeResult = 'success' | 'failure' | 'timeout' | 'local';

/** A tunnel the remote gateway would not open (refused, nothing healthy there): a connect failure, retried elsewhere. */
export class TunnelRefusedError extends Error {
  readonly code = 'CSG_TUNNEL_REFUSED';
  readonly status: number;
  constructor(status: number, reason: string, gateway: string) {
    super(`network gateway ${gateway} answered ${status} (${reason})`);
    this.status = status;
  }
}

export class TunnelConnectError extends Error {
  readonly code = 'CSG_TUNNEL_CONNECT';
}

export interface NetworkTunnelsOptions {
  readonly tls: NetworkTls;
  /** Opening the session (TCP, TLS, SETTINGS) and then the CONNECT stream's answer, each. Default 5 s. */
  readonly connectTimeoutMs?: number;
  /** A session with no stream this long is closed. Default 60 s. */
  readonly idleTimeoutMs?: number;
  readonly logger: Logger;
  readonly metrics: NetworkMetrics;
}

/**
 * The source side of multi-network: one mutual-TLS HTTP/2 session per other-network gateway (and the cluster it
 * must prove to be), shared by every backend; each upstream connection to that cluster is a CONNECT stream on it
 * (RFC 9113 §8.5) to the service's clusterset authority, which the proxy's pools then use as they use a socket
 * (keep-alive HTTP/1.1 inside). The gateway must present a certificate of this trust domain whose SPIFFE ID names
 * the cluster the endpoint stands for, so an address that leads elsewhere (even back to this gateway) is refused.
 * New certificates (NetworkTls reload) apply to new sessions; open sessions are closed gracefully (their streams
 * finish), so nothing is dropped.
 */
/** One outbound session and the CONNECT streams open on it (Node keeps no count of a session's streams). */
interface OutboundSession {
  readonly session: ClientHttp2Session;
  streams: number;
}

export class NetworkTunnels {
  readonly #options: NetworkTunnelsOptions;
  readonly #sessions = new Map<string, OutboundSession>();
  /** Handshake failures by gateway (`cluster@address:port`) and reason, for /config_dump. */
  readonly #handshakeFailures = new Map<string, Map<string, number>>();
  readonly #logger: Logger;
  readonly #unsubscribe: () => void;
  readonly #lastFailure = new Map<string, string>();

  constructor(options: NetworkTunnelsOptions) {
    this.#options = options;
    this.#logger = options.logger.child({ component: 'network-tunnels' });
    this.#unsubscribe = options.tls.onChange(() => {
      for (const open of this.#sessions.values()) open.session.close();
      this.#sessions.clear();
    });
  }

  /** The sessions open now, for /config_dump: gateway, cluster, the CONNECT streams open on it. */
  describe(): { gateway: string; cluster: string; streams: number }[] {
    return [...this.#sessions.entries()].map(([key, open]) => {
      const [cluster = '', gateway = ''] = key.split('@');
      return { gateway, cluster, streams: open.streams };
    });
  }

  /** Outbound TLS handshakes that failed, by gateway and reason, for /config_dump. */
  describeHandshakeFailures(): { gateway: string; cluster: string; reason: string; count: number }[] {
    const out: { gateway: string; cluster: string; reason: string; count: number }[] = [];
    for (const [key, reasons] of this.#handshakeFailures) {
      const [cluster = '', gateway = ''] = key.split('@');
      for (const [reason, count] of reasons) out.push({ gateway, cluster, reason, count });
    }
    return out;
  }

  /** undici's `connect` for a tunnel endpoint: a CONNECT stream to its authority on the gateway's session. */
  connector(endpoint: UpstreamEndpoint): TunnelConnect {
    return (_options, callback) => this.#open(endpoint, callback);
  }

  /**
   * A health probe of another network's gateway: the whole mutual-TLS handshake, on a session of its own, until
   * the peer's SETTINGS (a peer that refuses our certificate closes instead), then closed. A TCP connect alone
   * passes an address that leads back to this gateway, to another cluster's gateway or to a server that is not
   * one; each of those fails here, its reason counted as a traffic handshake's is. `local`: this gateway has no
   * usable certificate to probe with, which says nothing of the peer.
   */
  probe(endpoint: UpstreamEndpoint, timeoutMs: number): Promise<GatewayProbeResult> {
    if (!this.#options.tls.ready) return Promise.resolve('local');
    return new Promise((resolve) => {
      let settled = false;
      let handshaken = false;
      let session: ClientHttp2Session | undefined;
      const done = (result: GatewayProbeResult): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        session?.destroy();
        resolve(result);
      };
      const timer = setTimeout(done, timeoutMs, 'timeout');
      try {
        session = this.#connect(endpoint);
      } catch {
        done('local');
        return;
      }
      session.once('connect', () => {
        handshaken = true;
      });
      session.once('remoteSettings', () => {
        this.#lastFailure.delete(endpoint.key);
        done('success');
      });
      session.on('error', (err: Error & { code?: string }) => {
        if (settled) return;
        if (!handshaken) this.#countHandshakeFailure(endpoint, outboundHandshakeReason(err));
        this.#noteFailure(endpoint.key, `network gateway ${endpoint.key}: ${err.message}`);
        done('failure');
      });
      session.once('close', () => {
        if (settled) return;
        if (handshaken) this.#countHandshakeFailure(endpoint, 'closed-by-peer');
        done('failure');
      });
    });
  }

  close(): void {
    this.#unsubscribe();
    for (const open of this.#sessions.values()) open.session.destroy();
    this.#sessions.clear();
  }

  #open(endpoint: UpstreamEndpoint, callback: (err: Error | null, socket: Duplex | null) => void): void {
    const authority = endpoint.tunnel?.authority;
    const gateway = endpoint.key;
    if (authority === undefined) {
      callback(new TunnelConnectError(`${gateway} is not a network gateway endpoint`), null);
      return;
    }
    const timeoutMs = this.#options.connectTimeoutMs ?? 5_000;
    let settled = false;
    let stream: ClientHttp2Stream | undefined;
    let open: OutboundSession | undefined;
    const settle = (err: Error | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      const result = err === null ? 'connected' : err instanceof TunnelRefusedError ? 'refused' : 'failed';
      this.#options.metrics.tunnels.inc({ direction: 'outbound', cluster: endpoint.cluster, result });
      if (err !== null) {
        this.#noteFailure(gateway, err.message);
        stream?.destroy();
        callback(err, null);
        return;
      }
      this.#lastFailure.delete(gateway);
      this.#options.metrics.activeTunnels.inc({ direction: 'outbound' });
      const counted = open!;
      counted.streams++;
      stream!.once('close', () => {
        counted.streams--;
        this.#options.metrics.activeTunnels.dec({ direction: 'outbound' });
      });
      callback(null, stream!);
    };
    const timer = setTimeout(
      () => settle(new TunnelConnectError(`network gateway ${gateway}: no answer within ${timeoutMs} ms`)),
      timeoutMs,
    );
    let session: ClientHttp2Session;
    try {
      open = this.#session(endpoint);
      session = open.session;
      stream = session.request({ ':method': 'CONNECT', ':authority': authority });
    } catch (err) {
      settle(new TunnelConnectError(`network gateway ${gateway}: ${(err as Error).message}`));
      return;
    }
    // A session that failed cancels its pending streams with its error as the cause: one failure, one message.
    stream.on('error', (err) =>
      settle(new TunnelConnectError(`network gateway ${gateway}: ${rootMessage(err)}`)),
    );
    stream.once('close', () => {
      if (stream?.rstCode === h2.NGHTTP2_REFUSED_STREAM)
        settle(new TunnelRefusedError(0, 'stream refused', gateway));
      else settle(new TunnelConnectError(`network gateway ${gateway}: stream closed before an answer`));
    });
    stream.once('response', (headers) => {
      const status = Number(headers[':status']);
      if (status === 200) {
        settle(null);
        return;
      }
      const reason = String(headers[REFUSAL_HEADER] ?? 'refused');
      settle(new TunnelRefusedError(status, reason, gateway));
    });
  }

  /** The open session to the endpoint's gateway for its cluster, or a new one. */
  #session(endpoint: UpstreamEndpoint): OutboundSession {
    const key = endpoint.key;
    const known = this.#sessions.get(key);
    if (known !== undefined && !known.session.closed && !known.session.destroyed) return known;
    const session = this.#connect(endpoint);
    const open: OutboundSession = { session, streams: 0 };
    this.#sessions.set(key, open);
    this.#options.metrics.sessions.inc({ direction: 'outbound' });
    // The handshake is over at 'connect'; the session is usable once the peer's SETTINGS arrive. A peer that
    // refuses our certificate completes the handshake and then closes (its listener checks after it).
    let handshaken = false;
    let settled = false;
    session.once('connect', () => {
      handshaken = true;
    });
    session.once('remoteSettings', () => {
      settled = true;
    });
    session.on('error', (err: Error & { code?: string }) => {
      if (!handshaken) this.#countHandshakeFailure(endpoint, outboundHandshakeReason(err));
      this.#noteFailure(key, `network gateway ${key}: ${err.message}`);
    });
    session.setTimeout(this.#options.idleTimeoutMs ?? 60_000, () => {
      if (open.streams === 0) session.close();
    });
    session.once('close', () => {
      if (handshaken && !settled) this.#countHandshakeFailure(endpoint, 'closed-by-peer');
      this.#options.metrics.sessions.dec({ direction: 'outbound' });
      if (this.#sessions.get(key) === open) this.#sessions.delete(key);
    });
    session.once('goaway', () => {
      if (this.#sessions.get(key) === open) this.#sessions.delete(key);
    });
    session.unref();
    return open;
  }

  /** A mutual-TLS HTTP/2 session to the endpoint's gateway, which must prove the endpoint's cluster. */
  #connect(endpoint: UpstreamEndpoint): ClientHttp2Session {
    const material = this.#options.tls.material;
    const expected = formatClusterId({ trustDomain: material.id.trustDomain, cluster: endpoint.cluster });
    const host = endpoint.address.includes(':') ? `[${endpoint.address}]` : endpoint.address;
    return h2Connect(`https://${host}:${endpoint.port}`, {
      cert: material.cert,
      key: material.key,
      ca: material.ca,
      ALPNProtocols: ['h2'],
      settings: { enablePush: false },
      // The gateway proves the cluster, not a host name: its SPIFFE ID must name the cluster we want.
      checkServerIdentity: (_host: string, cert: PeerCertificate) => {
        const id = clusterIdOf(cert.subjectaltname);
        if (id !== undefined && formatClusterId(id) === expected) return undefined;
        if (id !== undefined && formatClusterId(id) === formatClusterId(material.id))
          return Object.assign(
            new Error(
              `address leads back to this gateway (${expected} expected, ${formatClusterId(id)} answered)`,
            ),
            { code: SELF_PEER_CODE },
          );
        return Object.assign(
          new Error(`certificate is not ${expected} (${id ? formatClusterId(id) : 'no cluster SPIFFE ID'})`),
          { code: WRONG_PEER_CODE },
        );
      },
    });
  }

  #countHandshakeFailure(endpoint: UpstreamEndpoint, reason: string | undefined): void {
    if (reason === undefined) return;
    this.#options.metrics.outboundHandshakeFailures.inc({ cluster: endpoint.cluster, reason });
    let reasons = this.#handshakeFailures.get(endpoint.key);
    if (reasons === undefined) {
      reasons = new Map();
      this.#handshakeFailures.set(endpoint.key, reasons);
    }
    reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
  }

  /** One log line per gateway per new kind of failure: a gateway down is a state, not an event per request. */
  #noteFailure(gateway: string, message: string): void {
    if (this.#lastFailure.get(gateway) === message) return;
    this.#lastFailure.set(gateway, message);
    this.#logger.warn({ gateway, err: message }, 'network gateway tunnel failed');
  }
}

function rootMessage(err: Error): string {
  return err.cause instanceof Error ? rootMessage(err.cause) : err.message;
}
