import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import { isIPv6 } from 'node:net';
import type { Logger } from 'pino';
import type { UpstreamEndpoint } from '../../ir/route-table.ts';
import type { AttemptOutcome } from '../../lb/balancer.ts';
import type { Layer4Metrics } from '../../metrics/layer4-metrics.ts';
import type { CompiledBackend } from '../compile/compile-backends.ts';
import type { CompiledLayer4Port, LiveEndpoints } from '../compile/layer4-compile.ts';
import { chooseTarget } from '../compile/weighted-route.ts';
import {
  DEFAULT_FLOW_TABLE_OPTIONS,
  type FlowEnd,
  FlowTable,
  type FlowTableOptions,
} from './udp-flow-table.ts';

export interface UdpPortOptions extends FlowTableOptions {
  /** Datagrams held per flow while its upstream socket connects; more are dropped. */
  readonly maxPendingDatagrams: number;
  /** Endpoints one client's datagram is tried on when they refuse it (ICMP port unreachable). */
  readonly maxAttempts: number;
}

/** A datagram larger than this is not kept for a resend (a typical path MTU's worth). */
const MAX_RESENT_BYTES = 1_500;

export const DEFAULT_UDP_PORT_OPTIONS: UdpPortOptions = {
  ...DEFAULT_FLOW_TABLE_OPTIONS,
  maxPendingDatagrams: 64,
  maxAttempts: 3,
};

/** One client's flow: its own upstream socket, connected to the endpoint picked for it. */
interface Flow {
  readonly key: string;
  readonly clientAddress: string;
  readonly clientPort: number;
  readonly route: string;
  readonly backend: CompiledBackend;
  readonly endpoint: UpstreamEndpoint;
  readonly upstream: Socket;
  /** Endpoints that refused this client's datagrams before this flow; cleared at the first reply. */
  tried: Set<string> | undefined;
  /** The latest datagram sent, sent again on the next endpoint when this one refuses it. */
  last: Buffer | undefined;
  /** Datagrams that arrived before the upstream socket connected. */
  pending: Buffer[] | undefined;
  /** Ends the balancer's attempt: at the first reply (its latency), or when the flow ends unanswered. */
  done: ((outcome: AttemptOutcome) => void) | undefined;
  readonly startedMs: number;
  readonly bytesUp: { inc(value: number): void };
  readonly bytesDown: { inc(value: number): void };
  ended: boolean;
}

/**
 * One UDP listener port (UDPRoute). A flow is a client address and port: its first datagram picks a backend
 * by weight and an endpoint by the backend's balancer, and opens an upstream socket connected to it; later
 * datagrams of the flow go the same way, and replies go back to the client from the listener's socket. Flows
 * expire when idle; the table is bounded and the flow idle longest makes room (both counted). A flow whose
 * endpoint goes away, or refuses (ICMP port unreachable), ends: the client's next datagram starts a new flow.
 */
export class UdpPortServer {
  readonly gatewayPort: number;
  readonly #logger: Logger;
  readonly #metrics: Layer4Metrics;
  readonly #options: UdpPortOptions;
  readonly #flows: FlowTable<Flow>;
  readonly #loggedReasons = new Set<string>();
  readonly #now: () => number;
  #socket: Socket | undefined;
  #sweep: NodeJS.Timeout | undefined;
  #compiled: CompiledLayer4Port;
  #boundPort = 0;

  constructor(
    compiled: CompiledLayer4Port,
    logger: Logger,
    metrics: Layer4Metrics,
    options: UdpPortOptions,
    now: () => number = Date.now,
  ) {
    this.gatewayPort = compiled.port;
    this.#compiled = compiled;
    this.#logger = logger;
    this.#metrics = metrics;
    this.#options = options;
    this.#flows = new FlowTable(options);
    this.#now = now;
  }

  get boundPort(): number {
    return this.#boundPort;
  }

  get openFlows(): number {
    return this.#flows.size;
  }

  swap(compiled: CompiledLayer4Port): void {
    this.#compiled = compiled;
  }

  /** Ends the flows whose endpoint is no longer one of its backend's; their next datagram picks anew. */
  endpointsChanged(live: LiveEndpoints): number {
    const gone = this.#flows.removeWhere((flow) => !live.has(flow.backend.id, flow.endpoint.key));
    for (const flow of gone) this.#end(flow, 'endpoint-gone');
    return gone.length;
  }

  listen(host: string, port: number): Promise<number> {
    const socket = createSocket({ type: isIPv6(host) ? 'udp6' : 'udp4' });
    return new Promise((resolve, reject) => {
      socket.once('error', (err) => {
        socket.close();
        reject(err);
      });
      socket.bind(port, host, () => {
        socket.removeAllListeners('error');
        socket.on('error', (err) =>
          this.#logger.warn({ port: this.gatewayPort, err: err.message }, 'UDP listener error'),
        );
        socket.on('message', (msg, rinfo) => this.#receive(msg, rinfo));
        this.#socket = socket;
        this.#boundPort = socket.address().port;
        const period = Math.max(10, Math.min(1_000, Math.floor(this.#options.idleTimeoutMs / 4)));
        this.#sweep = setInterval(() => this.#expire(), period);
        this.#sweep.unref();
        resolve(this.#boundPort);
      });
    });
  }

  /** Ends every flow at once: a datagram protocol has nothing in flight to drain. */
  close(_drainMs?: number): Promise<void> {
    if (this.#sweep) clearInterval(this.#sweep);
    for (const flow of this.#flows.clear()) this.#end(flow, 'closed');
    const socket = this.#socket;
    this.#socket = undefined;
    if (!socket) return Promise.resolve();
    return new Promise((resolve) => socket.close(() => resolve()));
  }

  #expire(): void {
    for (const flow of this.#flows.expire(this.#now())) this.#end(flow, 'idle');
  }

  #receive(msg: Buffer, rinfo: RemoteInfo): void {
    const key = `${rinfo.address} ${rinfo.port}`;
    const now = this.#now();
    const flow = this.#flows.touch(key, now) ?? this.#open(key, rinfo.address, rinfo.port, now, undefined);
    if (flow === undefined) return;
    this.#send(flow, msg);
  }

  #send(flow: Flow, msg: Buffer): void {
    flow.bytesUp.inc(msg.length);
    // Kept to send again elsewhere if the endpoint refuses it; only small ones, so that a flood of large
    // datagrams from many sources cannot pin maxFlows x 64 KiB.
    flow.last = msg.length <= MAX_RESENT_BYTES ? msg : undefined;
    if (flow.pending === undefined) {
      flow.upstream.send(msg, (err) => this.#sendFailed(flow, err));
    } else if (flow.pending.length < this.#options.maxPendingDatagrams) {
      flow.pending.push(msg);
    } else {
      this.#drop('pending-full', flow.route);
    }
  }

  #open(
    key: string,
    clientAddress: string,
    clientPort: number,
    now: number,
    tried: Set<string> | undefined,
  ): Flow | undefined {
    const route = this.#compiled.route;
    if (route === undefined) return this.#drop('no-route', '');
    const backend = chooseTarget(route, Math.random())?.backend;
    if (backend === undefined) return this.#drop('invalid-backend', route.route);
    const endpoint = backend.balancer.pick(tried);
    if (endpoint === undefined) return this.#drop('no-endpoint', route.route);
    const upstream = createSocket({ type: isIPv6(endpoint.address) ? 'udp6' : 'udp4' });
    const labels = { protocol: 'udp', route: route.route, backend: backend.id, cluster: endpoint.cluster };
    const flow: Flow = {
      key,
      clientAddress,
      clientPort,
      route: route.route,
      backend,
      endpoint,
      upstream,
      tried,
      last: undefined,
      pending: [],
      done: backend.balancer.begin(endpoint),
      startedMs: performance.now(),
      bytesUp: this.#metrics.bytes.labels({ ...labels, direction: 'upstream' }),
      bytesDown: this.#metrics.bytes.labels({ ...labels, direction: 'downstream' }),
      ended: false,
    };
    upstream.on('message', (reply, from) => this.#reply(flow, reply, from));
    upstream.on('error', (err) => this.#upstreamFailed(flow, err));
    upstream.connect(endpoint.port, endpoint.address, () => {
      const pending = flow.pending ?? [];
      flow.pending = undefined;
      for (const datagram of pending) upstream.send(datagram, (err) => this.#sendFailed(flow, err));
    });
    this.#metrics.flows.inc({ route: route.route, backend: backend.id, cluster: endpoint.cluster });
    this.#metrics.openFlows.inc({ route: route.route });
    const evicted = this.#flows.add(key, flow, now);
    if (evicted !== undefined) this.#end(evicted, 'evicted');
    return flow;
  }

  #reply(flow: Flow, reply: Buffer, from: RemoteInfo): void {
    // A connected socket only hears its endpoint; checked anyway, as nothing else may reach the client.
    if (flow.ended || from.port !== flow.endpoint.port) return;
    if (flow.done) {
      flow.done({ result: 'success', latencyMs: performance.now() - flow.startedMs });
      flow.done = undefined;
    }
    flow.tried = undefined;
    this.#flows.touch(flow.key, this.#now());
    flow.bytesDown.inc(reply.length);
    this.#socket?.send(reply, flow.clientPort, flow.clientAddress);
  }

  #sendFailed(flow: Flow, err: Error | null): void {
    if (err === null || flow.ended) return;
    // Too large for the path: this datagram is lost, as it would be on the wire; the flow stays.
    if ((err as NodeJS.ErrnoException).code === 'EMSGSIZE') {
      this.#drop('too-large', flow.route);
      return;
    }
    this.#upstreamFailed(flow, err);
  }

  /** ICMP port unreachable (ECONNREFUSED) and the like: the endpoint failed this flow. */
  #upstreamFailed(flow: Flow, err: Error): void {
    if (flow.ended) return;
    if (flow.done) {
      flow.done({ result: 'connect-failure', latencyMs: performance.now() - flow.startedMs });
      flow.done = undefined;
    }
    const current = this.#flows.delete(flow.key, flow);
    this.#end(flow, 'error');
    this.#logger.debug(
      { route: flow.route, endpoint: flow.endpoint.key, err: err.message },
      'UDP flow failed',
    );
    // The datagram is sent again on another endpoint, as a refused TCP connect is: the client sees an answer.
    const tried = new Set(flow.tried);
    tried.add(flow.endpoint.key);
    const last = flow.last;
    if (!current || last === undefined || tried.size >= this.#options.maxAttempts) return;
    const next = this.#open(flow.key, flow.clientAddress, flow.clientPort, this.#now(), tried);
    if (next !== undefined) this.#send(next, last);
  }

  #end(flow: Flow, reason: FlowEnd): void {
    if (flow.ended) return;
    flow.ended = true;
    // Unanswered is normal for UDP (syslog, metrics): not held against the endpoint.
    flow.done?.({ result: 'success', latencyMs: performance.now() - flow.startedMs });
    flow.done = undefined;
    try {
      flow.upstream.close();
    } catch {
      // Already closed by its own error: nothing left to release.
    }
    this.#metrics.openFlows.dec({ route: flow.route });
    this.#metrics.flowEnds.inc({
      route: flow.route,
      backend: flow.backend.id,
      cluster: flow.endpoint.cluster,
      reason,
    });
  }

  #drop(reason: string, route: string): undefined {
    this.#metrics.droppedDatagrams.inc({ gateway: this.#compiled.gateway, reason });
    if (!this.#loggedReasons.has(reason)) {
      this.#loggedReasons.add(reason);
      this.#logger.warn({ listener: this.#compiled.listener, route, reason }, 'UDP datagram dropped');
    }
    return undefined;
  }
}
