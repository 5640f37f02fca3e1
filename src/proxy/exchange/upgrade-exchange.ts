import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { Deadline } from '../../net/timer-wheel.ts';
import type { CompiledAction, ForwardTarget } from '../compile/compile-actions.ts';
import { CLIENT_CLOSED, FAILURES, type FailureKind, UpstreamFailure } from '../upstream/attempt-outcome.ts';
import { requestDeadlines } from '../upstream/request-deadlines.ts';
import { sendUpgrade, type UpgradeRequest } from '../upstream/upgrade-client.ts';
import { type AttemptOwner, UpstreamAttempt } from '../upstream/upstream-attempt.ts';
import type { ExchangeRecord } from './access-log.ts';
import { ExchangeRetries } from './exchange-retries.ts';
import type { ExchangeServices } from './forward-exchange.ts';
import { type Framing, refusalRelay, responseHead, writeRawReply } from './upgrade-response.ts';
import type { UpstreamRequestHead } from './upstream-request.ts';

/** Time to the upstream's answer (101 or not) when the route sets no request timeout. */
const DEFAULT_UPGRADE_RESPONSE_TIMEOUT_MS = 60_000;
/** `--tunnel-idle-timeout-ms`: an upgraded connection idle this long either way is closed. */
const DEFAULT_TUNNEL_IDLE_TIMEOUT_MS = 3_600_000;

/**
 * Hands a connection whose upgrade was refused back to the listener's HTTP/1 server, with the bytes read past
 * the request (`head`, the start of the next request) put back: its next request is parsed and routed as any.
 */
export type ResumeHttp1 = (socket: Duplex, head: Buffer) => void;

/** `waiting` for the endpoint's answer, `relaying` its refusal, `tunnel` after its 101, then `ended`. */
type UpgradeState = 'waiting' | 'relaying' | 'tunnel' | 'ended';

function onUpgradeTimeout(exchange: UpgradeExchange): void {
  exchange.timedOut();
}

/**
 * One upgrade request (WebSocket and the like) forwarded: the same pick, retries before the answer (connection
 * faults, with the backend's retry budget) and outcome reports (balancer health and outlier detection, upstream
 * metrics, the route's series, the access log) as any request, through the same attempt (upstream-attempt.ts);
 * only the connection is its own (upgrade-client.ts), plain, TLS or through another network's tunnel. Only a 101
 * turns the client's connection into a tunnel; any other answer is relayed as a plain response, so a client can
 * never reach a backend unrouted. After it the connection serves the client's next request through `resume` (as
 * nginx and Envoy do) when the exchange allows it: no request body left unread, a response body with a known
 * length, neither side asking to close; otherwise it closes.
 */
export class UpgradeExchange extends ExchangeRetries implements AttemptOwner, ExchangeRecord {
  readonly req: IncomingMessage;
  readonly #services: ExchangeServices;
  readonly #client: Duplex;
  /** Bytes the client sent past its request head: the tunnel's first, or the next request's after a refusal. */
  readonly #firstBytes: Buffer;
  readonly #action: CompiledAction;
  readonly #target: ForwardTarget;
  readonly #request: UpgradeRequest;
  /** Set when the client's side of the exchange lets its connection carry another request. */
  readonly #resume: ResumeHttp1 | undefined;
  readonly #onClientClose = (): void => this.#clientClosed();
  #state: UpgradeState = 'waiting';
  #timer: Deadline<UpgradeExchange> | undefined;
  #framing: Framing = 'close';
  #keep = false;
  bytes = 0;
  loggedStatus = 0;

  constructor(
    services: ExchangeServices,
    req: IncomingMessage,
    client: Duplex,
    firstBytes: Buffer,
    action: CompiledAction,
    target: ForwardTarget,
    head: UpstreamRequestHead,
    startMs: number,
    resume: ResumeHttp1 | undefined,
  ) {
    super(services.pools, target.backend, startMs);
    this.req = req;
    this.#services = services;
    this.#client = client;
    this.#firstBytes = firstBytes;
    this.#action = action;
    this.#target = target;
    this.#request = { method: req.method ?? 'GET', path: head.path, headers: head.headers };
    this.#resume = resume;
  }

  start(): void {
    this.#client.once('close', this.#onClientClose);
    this.enterBudget();
    this.#timer = new Deadline<UpgradeExchange>(this, onUpgradeTimeout);
    requestDeadlines.arm(this.#timer, this.#action.requestTimeoutMs ?? DEFAULT_UPGRADE_RESPONSE_TIMEOUT_MS);
    this.#attempt();
  }

  /** `endpoint`: the one a retry after a reset goes to; else the balancer picks. */
  #attempt(endpoint = this.nextEndpoint()): void {
    // A tunnel holds one of the endpoint's connection slots for its whole life, as a request does for its own.
    const attempt = this.beginAttempt(this, endpoint, this.#services.rejections);
    if (!(attempt instanceof UpstreamAttempt)) {
      this.#reply(attempt.status, attempt.text);
      return;
    }
    // Every upgrade has a connection of its own: a reset on it is the endpoint's doing.
    attempt.newConnection = true;
    sendUpgrade(this.pools.connection(attempt.endpoint, this.backend!.cluster.tls), this.#request, attempt);
  }

  onUpstreamUpgrade(
    attempt: UpstreamAttempt,
    statusCode: number,
    upstream: Duplex,
    raw: readonly string[],
  ): void {
    attempt.status = statusCode;
    if (!this.#answered()) {
      attempt.finish('client-gone');
      upstream.destroy();
      return;
    }
    this.#state = 'tunnel';
    const client = this.#client;
    (upstream as Partial<Socket>).setNoDelay?.(true);
    (upstream as Partial<Socket>).setTimeout?.(0);
    // Every byte either way passes the client socket (read or written): its idle timer is the tunnel's.
    const clientSocket = client as Partial<Socket>;
    clientSocket.setTimeout?.(this.#services.tunnelIdleTimeoutMs ?? DEFAULT_TUNNEL_IDLE_TIMEOUT_MS);
    clientSocket.once?.('timeout', () => {
      upstream.destroy();
      client.destroy();
    });
    let failure: FailureKind | undefined;
    upstream.on('error', () => {
      failure = 'reset-mid-body';
      client.destroy();
    });
    client.write(responseHead(statusCode, raw, this.#target.responseMods, true));
    if (this.#firstBytes.length > 0) upstream.write(this.#firstBytes);
    upstream.pipe(client);
    client.pipe(upstream);
    upstream.on('data', (chunk: Buffer) => {
      this.bytes += chunk.length;
    });
    client.once('close', () => upstream.destroy());
    upstream.once('close', () => {
      attempt.finish(failure);
      client.destroy();
      this.#end(statusCode);
    });
  }

  onUpstreamHeaders(
    attempt: UpstreamAttempt,
    statusCode: number,
    raw: readonly (Buffer | string)[],
  ): boolean {
    if (statusCode < 200) return true;
    attempt.status = statusCode;
    if (!this.#answered()) return false;
    // Refused (or ignored) upgrade: an ordinary answer, never a tunnel.
    this.#state = 'relaying';
    const relay = refusalRelay(
      this.#request.method,
      statusCode,
      raw.map(String),
      this.#target.responseMods,
      this.#resume !== undefined,
    );
    this.#framing = relay.framing;
    this.#keep = relay.keep;
    this.#client.write(relay.head);
    return true;
  }

  onUpstreamData(attempt: UpstreamAttempt, chunk: Buffer): boolean {
    if (this.#state !== 'relaying') return false;
    if (chunk.length === 0) return true;
    this.bytes += chunk.length;
    const client = this.#client;
    let ok: boolean;
    if (this.#framing === 'chunked') {
      client.write(`${chunk.length.toString(16)}\r\n`);
      client.write(chunk);
      ok = client.write('\r\n');
    } else ok = client.write(chunk);
    if (!ok && attempt.resume !== undefined) client.once('drain', attempt.resume);
    return ok;
  }

  onUpstreamComplete(attempt: UpstreamAttempt): void {
    attempt.finish();
    if (this.#state !== 'relaying') return;
    this.#state = 'ended';
    const client = this.#client;
    if (!client.destroyed) {
      if (this.#framing === 'chunked') client.write('0\r\n\r\n');
      if (this.#keep) this.#resume!(client, this.#firstBytes);
      else client.end();
    }
    this.#end(attempt.status);
  }

  onUpstreamError(attempt: UpstreamAttempt, failure: UpstreamFailure): void {
    const kind = failure.kind;
    if (this.#state !== 'waiting') {
      attempt.finish(kind);
      if (this.#state !== 'relaying') return;
      // The refusal was cut after its head: the client got that head's status.
      this.#state = 'ended';
      this.#client.destroy();
      this.#end(attempt.status);
      return;
    }
    const decision = this.connectionRetry(attempt, kind, this.#request.method, 'none', false);
    attempt.finish(kind);
    if (kind === 'local-error') {
      // Our own request could not be built (a header no upstream request can carry): a 500, never the endpoint's.
      this.#services.rejections?.report('invalid upstream request', { err: failure.message });
      this.#reply(500, 'invalid upstream request');
      return;
    }
    if (!decision.retry) {
      this.#reply(FAILURES[kind].status);
      return;
    }
    // The response timeout bounds the retries (nothing reached the client before an answer).
    const verdict = this.mayRetry(decision.reason, true);
    if (verdict !== 'yes') {
      this.#reply(
        verdict === 'budget' ? 503 : FAILURES[kind].status,
        verdict === 'budget' ? 'retry budget exhausted' : '',
      );
      return;
    }
    this.#attempt(this.noteConnectionRetry(decision.reason, attempt.endpoint, false));
  }

  /** No answer within the route's request timeout (or the default). */
  timedOut(): void {
    if (this.#state !== 'waiting') return;
    this.abandonAttempt(
      'response-timeout',
      new UpstreamFailure('response-timeout', 'upgrade response timeout'),
    );
    this.#reply(504);
  }

  /** The endpoint answered: true when the client still waits for it (its timer stops, the retry budget is left). */
  #answered(): boolean {
    if (this.#timer !== undefined) requestDeadlines.cancel(this.#timer);
    this.leaveBudget();
    return this.#state === 'waiting' && !this.#client.destroyed;
  }

  #clientClosed(): void {
    if (this.#state !== 'waiting' && this.#state !== 'relaying') return;
    this.#state = 'ended';
    if (this.#timer !== undefined) requestDeadlines.cancel(this.#timer);
    // The client left; not the endpoint's fault, so it is not counted against it.
    this.abandonAttempt('client-gone', new Error('client closed the connection'));
    this.#end(CLIENT_CLOSED);
  }

  /** Ends the exchange before any answer went out with one of the gateway's own. */
  #reply(status: number, text = ''): void {
    if (this.#state !== 'waiting') return;
    this.#state = 'ended';
    if (this.#timer !== undefined) requestDeadlines.cancel(this.#timer);
    this.bytes += writeRawReply(this.#client, status, text);
    this.#end(status);
  }

  /** The exchange ended with `status` for the client: the route's series and the access log see it. */
  #end(status: number): void {
    this.leaveBudget();
    this.#client.off('close', this.#onClientClose);
    this.loggedStatus = status;
    const endMs = performance.now();
    this.#target.series.record(status, (endMs - this.startMs) / 1000);
    this.#services.accessLog?.exchanged(this, endMs);
  }
}
