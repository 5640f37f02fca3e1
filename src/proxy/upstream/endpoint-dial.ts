import type { Duplex } from 'node:stream';
import type { UpstreamEndpoint } from '../../ir/route-table.ts';
import type { Balancer } from '../../lb/balancer.ts';
import { connectReadingOwnBuffer } from './byte-relay.ts';

/**
 * For an endpoint on another network (`UpstreamEndpoint.tunnel`): a function that opens a CONNECT stream to it
 * through that network's gateway (src/network), in undici's `connect` shape. The stream is a Duplex carrying the
 * bytes to and from a pod of the service the remote gateway picks.
 */
export interface TunnelConnectors {
  connector(
    endpoint: UpstreamEndpoint,
  ): (options: object, callback: (err: Error | null, socket: Duplex | null) => void) => void;
}

/** Without network TLS configured, a tunnel endpoint cannot be reached: a connect failure, retried elsewhere. */
export const NO_TUNNELS: TunnelConnectors = {
  connector: (endpoint) => (_options, callback) =>
    callback(
      Object.assign(new Error(`${endpoint.key} is on another network and --network-tls-cert is not set`), {
        code: 'CSG_NO_NETWORK_TLS',
      }),
      null,
    ),
};

export interface DialOptions {
  readonly connectTimeoutMs: number;
  /** The read buffer a TCP upstream holds for its life (`--layer4-read-buffer-bytes`); default 64 KiB. */
  readonly readBufferBytes?: number;
  readonly tunnels?: TunnelConnectors;
}

/**
 * A byte stream to an endpoint, for the layer-4 relays (TCPRoute, TLSRoute, east-west CONNECT; `relay()` in
 * byte-relay.ts): a TCP connection to its address, reading into a buffer of its own and paused until the relay
 * starts, or, for an endpoint on another network, a CONNECT stream through its network gateway. `callback` runs once:
 * with the connected stream, or with why there is none (refused, unreachable, timed out, the tunnel refused).
 * Returns a cancel: after it the callback never runs and whatever was opened is destroyed.
 */
export function dialEndpoint(
  endpoint: UpstreamEndpoint,
  options: DialOptions,
  callback: (err: Error | null, upstream: Duplex | null) => void,
): () => void {
  let settled = false;
  let opened: Duplex | undefined;
  const settle = (err: Error | null, upstream: Duplex | null): void => {
    if (settled) {
      upstream?.destroy();
      return;
    }
    settled = true;
    clearTimeout(timer);
    callback(err, upstream);
  };
  const timer = setTimeout(() => {
    opened?.destroy();
    settle(new Error(`connect timeout after ${options.connectTimeoutMs} ms`), null);
  }, options.connectTimeoutMs);
  if (endpoint.tunnel !== undefined) {
    (options.tunnels ?? NO_TUNNELS).connector(endpoint)({}, (err, stream) => {
      if (err !== null || stream === null) settle(err ?? new Error('no tunnel'), null);
      else settle(null, stream);
    });
  } else {
    const socket = connectReadingOwnBuffer(
      { host: endpoint.address, port: endpoint.port, allowHalfOpen: true, noDelay: true },
      options.readBufferBytes,
    );
    opened = socket;
    const onError = (err: Error): void => {
      socket.destroy();
      settle(err, null);
    };
    socket.once('error', onError);
    socket.once('connect', () => {
      socket.off('error', onError);
      settle(null, socket);
    });
  }
  return () => {
    if (settled) return;
    settled = true;
    clearTimeout(timer);
    opened?.destroy();
  };
}

/**
 * Dials `endpoint` (picked from `balancer`) for a relay of `client`, and tells the balancer how it went: a
 * failed connect is the endpoint's (`failed` then picks again or gives up); a client that leaves while the dial
 * is under way cancels it, and that is not held against the endpoint.
 */
export function dialForClient(
  client: Duplex,
  balancer: Balancer,
  endpoint: UpstreamEndpoint,
  options: DialOptions,
  then: { readonly failed: () => void; readonly connected: (upstream: Duplex) => void },
): void {
  const started = performance.now();
  const done = balancer.begin(endpoint);
  let connected = false;
  const giveUp = (): void => {
    if (connected) return;
    done({ result: 'success', latencyMs: performance.now() - started });
    cancel();
  };
  client.once('close', giveUp);
  const cancel = dialEndpoint(endpoint, options, (err, upstream) => {
    client.off('close', giveUp);
    if (err !== null || upstream === null) {
      if (client.destroyed) return;
      done({ result: 'connect-failure', latencyMs: performance.now() - started });
      then.failed();
      return;
    }
    connected = true;
    done({ result: 'success', latencyMs: performance.now() - started });
    then.connected(upstream);
  });
}
