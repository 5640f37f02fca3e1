import type { UpstreamEndpoint } from '../../ir/route-table.ts';
import type { BadInputReporter } from '../../net/bad-input.ts';
import type { CompiledBackend } from '../compile/compile-backends.ts';
import type { RetryBudget } from '../compile/retry-budget.ts';
import type { FailureKind } from '../upstream/attempt-outcome.ts';
import {
  type BodyState,
  decideConnectionRetry,
  faultOf,
  type RetryDecision,
  type RetryReason,
} from '../upstream/connection-retry.ts';
import { type AttemptOwner, UpstreamAttempt } from '../upstream/upstream-attempt.ts';
import type { UpstreamPools } from '../upstream/upstream-pools.ts';
import { pinningOf, type RequestSession } from './session-persistence.ts';

const NOTHING_FAILED: ReadonlySet<string> = new Set();

/** Why no attempt could start: the answer the client gets instead. */
export interface NoAttempt {
  readonly status: 502 | 503;
  readonly text?: string;
}

const NOTHING_TO_PICK: NoAttempt = { status: 503 };
const EVERY_ENDPOINT_FAILED: NoAttempt = { status: 502 };
const CONNECTION_LIMIT: NoAttempt = { status: 503, text: 'upstream connection limit reached' };

/**
 * The attempts and retry side of one forwarded request or upgrade, which the exchanges (forward-exchange.ts,
 * upgrade-exchange.ts) extend so that a request is still one object: its attempts begun and abandoned, the
 * endpoints tried and those whose failure was theirs (their tiers are skipped by the next pick), the counts that
 * bound connection-fault retries (connection-retry.ts) and a route's status retries, and the backend's retry
 * budget the request counts in (GEP-3388).
 */
export abstract class ExchangeRetries {
  readonly backend: CompiledBackend | undefined;
  readonly startMs: number;
  protected readonly pools: UpstreamPools;
  #tried: Set<string> | undefined;
  /** Of those, the endpoints whose failure was theirs: their tiers are skipped by the retries (previous priorities). */
  #failed: Set<string> | undefined;
  #failovers = 0;
  #resetRetries = 0;
  /** Endpoints that reset this request before a response (allocated on the first). */
  #resetBy: Set<string> | undefined;
  #statusRetries = 0;
  /** Status retries (a route's codes): the endpoint to go back to when no other can be picked. */
  #again: UpstreamEndpoint | undefined;
  /** The backend's retry budget while this request counts in it (from `enterBudget` to `leaveBudget`). */
  #budget: RetryBudget | undefined;
  /** This request holds one of the budget's retries (from its first retry on). */
  #retrying = false;
  /** Session persistence for this request (set before `start`): its pin steers every pick. */
  session: RequestSession | undefined;
  /** The latest attempt; undefined before the first. */
  protected current: UpstreamAttempt | undefined;
  /** Attempts started, retries included. */
  attempts = 0;

  constructor(pools: UpstreamPools, backend: CompiledBackend | undefined, startMs: number) {
    this.pools = pools;
    this.backend = backend;
    this.startMs = startMs;
  }

  /** The endpoint of the latest attempt (for the access log); undefined before the first pick or when none. */
  get endpoint(): UpstreamEndpoint | undefined {
    return this.current?.endpoint;
  }

  get backendId(): string | undefined {
    return this.backend?.id;
  }

  /** How the latest attempt failed, if it did. */
  get failure(): FailureKind | undefined {
    return this.current?.failure;
  }

  /**
   * The next attempt, on `endpoint`, holding one of its connection slots; or why there is none: nothing to pick
   * at all is 503, every endpoint having failed 502, the endpoint's connections and queue full 503 (load shed,
   * without blaming the endpoint).
   */
  protected beginAttempt(
    owner: AttemptOwner,
    endpoint: UpstreamEndpoint | undefined,
    rejections: BadInputReporter | undefined,
  ): UpstreamAttempt | NoAttempt {
    if (endpoint === undefined) return this.#tried !== undefined ? EVERY_ENDPOINT_FAILED : NOTHING_TO_PICK;
    const slot = this.pools.reserve(endpoint);
    if (slot === undefined) {
      rejections?.report('upstream connection limit', { endpoint: endpoint.key });
      return CONNECTION_LIMIT;
    }
    const attempt = new UpstreamAttempt(owner, endpoint, this.backend!.balancer, this.pools, slot);
    this.attempts++;
    this.current = attempt;
    return attempt;
  }

  /** Ends the latest attempt as `kind` when it still runs, and cancels its upstream request with `reason`. */
  protected abandonAttempt(kind: FailureKind, reason: Error): void {
    const attempt = this.current;
    if (attempt === undefined || attempt.ended) return;
    attempt.finish(kind);
    attempt.cancel(reason);
  }

  /** The endpoint for the next attempt: one not tried, outside the tiers that failed, else the status retry's. */
  protected nextEndpoint(): UpstreamEndpoint | undefined {
    const backend = this.backend!;
    const balancer = backend.balancer;
    const pin = this.session?.pin;
    if (pin !== undefined && balancer.pickPinned !== undefined)
      return (
        balancer.pickPinned(pin, pinningOf(backend.cluster), this.#tried, this.#failed ?? NOTHING_FAILED) ??
        this.#again
      );
    return balancer.pick(this.#tried, this.#failed ?? NOTHING_FAILED) ?? this.#again;
  }

  /** The request counts in its backend's retry budget from now. */
  protected enterBudget(): void {
    const budget = this.backend?.retryBudget;
    if (budget === undefined) return;
    budget.activeRequests++;
    this.#budget = budget;
  }

  /** The request leaves its backend's retry budget: it no longer counts as in flight, nor as retrying. */
  protected leaveBudget(): void {
    const budget = this.#budget;
    if (budget === undefined) return;
    this.#budget = undefined;
    budget.activeRequests--;
    if (this.#retrying) budget.activeRetries--;
  }

  /**
   * Whether a retry may start now: `budget` when the backend's retry budget refuses it (the client gets 503),
   * `late` past the retry window when no request timeout bounds the retries (`timed`), else `yes`, counted by
   * reason.
   */
  protected mayRetry(reason: RetryReason | 'retriable-status', timed: boolean): 'yes' | 'budget' | 'late' {
    const pools = this.pools;
    const backend = this.backend!;
    if (!timed && performance.now() - this.startMs > pools.retryWindowMs) return 'late';
    if (!this.#retrying && this.#budget !== undefined) {
      if (!this.#budget.admit()) {
        pools.countRetryBudgetExhausted(backend.id);
        return 'budget';
      }
      this.#retrying = true;
    }
    pools.countRetry(backend.id, reason);
    return 'yes';
  }

  /** Whether a route's retry policy (`attempts` in all) still allows a retry on a status. */
  protected statusRetriesLeft(attempts: number): boolean {
    return this.#statusRetries < attempts;
  }

  /** A retry on a status starts: another endpoint (and tier) when there is one, else this one again. */
  protected noteStatusRetry(endpoint: UpstreamEndpoint): void {
    this.#statusRetries++;
    this.#tried ??= new Set();
    this.#tried.add(endpoint.key);
    this.#failed ??= new Set();
    this.#failed.add(endpoint.key);
    // Envoy's previous_hosts falls back to them too.
    this.#again = endpoint;
  }

  /** Whether a failed attempt is sent again, and how (connection-retry.ts). */
  protected connectionRetry(
    attempt: UpstreamAttempt,
    kind: FailureKind,
    method: string,
    body: BodyState,
    responseStarted: boolean,
  ): RetryDecision {
    return decideConnectionRetry({
      method,
      body,
      fault: faultOf(kind, attempt.connected, responseStarted),
      connectFailovers: this.#failovers,
      resetRetries: this.#resetRetries,
      endpointResetBefore: this.#resetBy?.has(attempt.endpoint.key) === true,
    });
  }

  /**
   * A connection-fault retry starts. `notTheEndpoints`: the failure says nothing about the endpoint's tier (a
   * stale keep-alive connection), so the retry may stay in it. Returns the endpoint to send it to on a connection
   * of its own (after a reset: another endpoint when there is one, else the same), or undefined to pick anew.
   */
  protected noteConnectionRetry(
    reason: RetryReason,
    endpoint: UpstreamEndpoint,
    notTheEndpoints: boolean,
  ): UpstreamEndpoint | undefined {
    this.#tried ??= new Set();
    this.#tried.add(endpoint.key);
    if (!notTheEndpoints) {
      this.#failed ??= new Set();
      this.#failed.add(endpoint.key);
    }
    if (reason === 'connect-failure') {
      this.#failovers++;
      return undefined;
    }
    this.#resetRetries++;
    this.#resetBy ??= new Set();
    this.#resetBy.add(endpoint.key);
    return this.backend!.balancer.pick(this.#tried, this.#failed ?? NOTHING_FAILED) ?? endpoint;
  }
}
