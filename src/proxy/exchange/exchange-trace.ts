import type { IncomingMessage } from 'node:http';
import type { BackendCluster, UpstreamEndpoint } from '../../ir/route-table.ts';
import {
  type Attributes,
  endSpan,
  epochOffsetMs,
  type RequestTracer,
  type Span,
  traceparentOf,
} from '../../trace/request-tracer.ts';
import { incomingTraceParent, isTraceContextHeader } from '../../trace/traceparent.ts';
import type { CompiledAction, ForwardTarget } from '../compile/compile-actions.ts';
import { FAILURES } from '../upstream/attempt-outcome.ts';
import type { UpstreamAttempt } from '../upstream/upstream-attempt.ts';
import type { UpstreamRequestHead } from './upstream-request.ts';

/** The gateway's own span attributes (docs/tracing.md); OpenTelemetry's HTTP conventions are used where one fits. */
const GW = 'clusterset_gateway.';

/** OpenTelemetry's known methods; any other is `_OTHER` (with the method as sent beside it), keeping names few. */
const KNOWN_METHODS: ReadonlySet<string> = new Set([
  'GET',
  'HEAD',
  'POST',
  'PUT',
  'DELETE',
  'CONNECT',
  'OPTIONS',
  'TRACE',
  'PATCH',
]);

/**
 * The trace of one forwarded request, which the exchange (forward-exchange.ts) holds only when tracing is on: the
 * server span (the caller's trace continued, or a new one), a client span per attempt (a retry is another span,
 * saying why the one before it was retried) and the `traceparent` each attempt carries upstream, naming its
 * client span. A request whose trace is not sampled gets no client spans; its attempts carry the server span's
 * context with the sampled flag off, so the services behind keep the decision.
 */
export class ExchangeTrace {
  readonly #tracer: RequestTracer;
  readonly #server: Span;
  readonly #recording: boolean;
  readonly #method: string;
  readonly #tracestate: string | undefined;
  /** Added to the data plane's performance.now() times: the spans' wall-clock times, one offset for them all. */
  readonly #offsetMs: number;
  /** The upstream head's headers without the client's trace context (made at the first attempt). */
  #headers: string[] | undefined;
  #client: Span | undefined;
  /** The attempt of the latest client span (its outcome is the retry reason of the next). */
  #attempt: UpstreamAttempt | undefined;

  constructor(
    tracer: RequestTracer,
    req: IncomingMessage,
    action: CompiledAction,
    target: ForwardTarget,
    startMs: number,
  ) {
    this.#tracer = tracer;
    const method = KNOWN_METHODS.has(req.method ?? '') ? req.method! : '_OTHER';
    this.#method = method;
    const parent = incomingTraceParent(req.rawHeaders);
    this.#tracestate = parent?.tracestate;
    this.#offsetMs = epochOffsetMs();
    this.#server = tracer.server(`${method} ${action.route}`, parent, startMs + this.#offsetMs, () =>
      serverAttributes(req, method, action, target),
    );
    this.#recording = this.#server.isRecording();
  }

  /** The head attempt `n` (1 for the first) sends: the client's trace context replaced by this attempt's. */
  attempt(
    attempt: UpstreamAttempt,
    n: number,
    head: UpstreamRequestHead,
    cluster: BackendCluster,
  ): UpstreamRequestHead {
    this.#endClient(attempt.startMs);
    let parent = this.#server;
    if (this.#recording) {
      const previous = this.#attempt;
      const attributes = clientAttributes(this.#method, attempt.endpoint, n, cluster);
      if (previous !== undefined) {
        attributes['http.request.resend_count'] = n - 1;
        attributes[`${GW}retry.reason`] =
          previous.failure === undefined ? 'retriable-status' : FAILURES[previous.failure].retry;
      }
      this.#client = this.#tracer.client(
        this.#server,
        this.#method,
        attempt.startMs + this.#offsetMs,
        attributes,
      );
      this.#attempt = attempt;
      parent = this.#client;
    }
    this.#headers ??= head.headers.filter(
      (value, i, all) => !isTraceContextHeader(i % 2 === 0 ? value : all[i - 1]!),
    );
    const headers = this.#headers.concat('traceparent', traceparentOf(parent));
    if (this.#tracestate !== undefined) headers.push('tracestate', this.#tracestate);
    return { ...head, headers };
  }

  /** The request ended at `endMs` with `status` for the client, served last by `endpoint` (if any). */
  ended(status: number, endMs: number, attempts: number, endpoint: UpstreamEndpoint | undefined): void {
    this.#endClient(endMs);
    if (!this.#recording) return;
    const server = this.#server;
    server.setAttribute('http.response.status_code', status);
    server.setAttribute(`${GW}attempts`, attempts);
    if (endpoint !== undefined) {
      server.setAttribute(`${GW}cluster`, endpoint.cluster);
      if (endpoint.zone !== undefined) server.setAttribute(`${GW}zone`, endpoint.zone);
      server.setAttribute(`${GW}endpoint`, endpoint.key);
    }
    const attempt = this.#attempt;
    if (attempt !== undefined) server.setAttribute(`${GW}outcome`, attempt.failure ?? 'response');
    endSpan(server, endMs + this.#offsetMs, status >= 500 ? String(status) : undefined);
  }

  /** Ends the latest client span: when its attempt finished, else at `nowMs` (the attempt was given up on). */
  #endClient(nowMs: number): void {
    const span = this.#client;
    const attempt = this.#attempt;
    if (span === undefined || attempt === undefined) return;
    this.#client = undefined;
    const { status, failure } = attempt;
    if (status !== 0) span.setAttribute('http.response.status_code', status);
    span.setAttribute(`${GW}outcome`, failure ?? 'response');
    const error = failure ?? (status >= 400 ? String(status) : undefined);
    endSpan(span, (attempt.ended ? attempt.endMs : nowMs) + this.#offsetMs, error);
  }
}

function serverAttributes(
  req: IncomingMessage,
  method: string,
  action: CompiledAction,
  target: ForwardTarget,
): Attributes {
  const url = req.url ?? '/';
  const query = url.indexOf('?');
  const peer = req.socket?.remoteAddress ?? '';
  const host = req.headers[':authority'] ?? req.headers.host;
  const attributes: Attributes = {
    'http.request.method': method,
    'url.path': query === -1 ? url : url.slice(0, query),
    'url.scheme': action.scheme,
    'server.port': action.listenerPort,
    'network.protocol.version':
      req.httpVersionMajor === 2 ? '2' : `${req.httpVersionMajor}.${req.httpVersionMinor}`,
    'network.peer.address': peer.startsWith('::ffff:') && peer.includes('.') ? peer.slice(7) : peer,
    [`${GW}route`]: action.route,
    [`${GW}gateway`]: action.gateway,
  };
  if (method === '_OTHER') attributes['http.request.method_original'] = req.method ?? '';
  if (typeof host === 'string') attributes['server.address'] = hostName(host);
  if (target.backend !== undefined) attributes[`${GW}backend`] = target.backend.id;
  return attributes;
}

function clientAttributes(
  method: string,
  endpoint: UpstreamEndpoint,
  n: number,
  cluster: BackendCluster,
): Attributes {
  const attributes: Attributes = {
    'http.request.method': method,
    'server.address': endpoint.address,
    'server.port': endpoint.port,
    'network.peer.address': endpoint.address,
    'network.peer.port': endpoint.port,
    [`${GW}backend`]: cluster.id,
    [`${GW}attempt`]: n,
    [`${GW}cluster`]: endpoint.cluster,
    [`${GW}endpoint`]: endpoint.key,
  };
  if (endpoint.zone !== undefined) attributes[`${GW}zone`] = endpoint.zone;
  if (endpoint.region !== undefined) attributes[`${GW}region`] = endpoint.region;
  if (endpoint.pod !== undefined) attributes[`${GW}pod`] = endpoint.pod;
  const tier = tierOf(cluster, endpoint.key);
  if (tier !== undefined) {
    attributes[`${GW}tier`] = tier;
    const name = cluster.tierNames?.[tier];
    if (name !== undefined) attributes[`${GW}tier.name`] = name;
  }
  return attributes;
}

/** The Host header's name (no port). */
function hostName(host: string): string {
  if (host.charCodeAt(0) === 91 /* [ */) return host.slice(0, host.indexOf(']') + 1);
  const colon = host.indexOf(':');
  return colon === -1 ? host : host.slice(0, colon);
}

/** By endpoint set (a new one comes with every endpoint change): each endpoint key's tier index. */
const TIERS = new WeakMap<BackendCluster, Map<string, number>>();

function tierOf(cluster: BackendCluster, key: string): number | undefined {
  let tiers = TIERS.get(cluster);
  if (tiers === undefined) {
    tiers = new Map();
    cluster.tiers.forEach((endpoints, i) => {
      for (const endpoint of endpoints) if (!tiers!.has(endpoint.key)) tiers!.set(endpoint.key, i);
    });
    TIERS.set(cluster, tiers);
  }
  return tiers.get(key);
}
