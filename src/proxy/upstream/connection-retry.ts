import { FAILURES, type FailureKind } from './attempt-outcome.ts';

/**
 * Whether a request that failed on its way to a backend may be sent again, without the client seeing the
 * failure (issue 10). Independent of HTTPRoute retry policy, which answers a different question (retry on
 * which status codes) and stays as it is.
 *
 * - `connect-failure`: no byte of the request left (refused, unreachable, connect timeout); safe for any
 *   method. Another endpoint takes it (up to a few times per request), as before.
 * - `reset-before-response`: the connection (typically a reused keep-alive one the backend had just closed)
 *   failed after the request was written and before any response byte. Sent again on a fresh connection (to
 *   another endpoint if there is one, else the same), when the request is idempotent (RFC 9110 §9.2.2), or
 *   when it has a body none of which left: a backend cannot have acted on a request whose body it never got.
 *   Once per endpoint that reset it (two pods of a tier going down together reset one request twice, and the
 *   next tier should still answer it, as Envoy's retry with previous-host skipping does), a few times in all.
 *   A non-idempotent request without a body was complete on the wire, so it is not repeated.
 * - a body partly streamed is never sent twice (it cannot be replayed, and the backend saw part of it).
 * - timeouts, cancellations and failures after the response began (`other`) are never retried here.
 */
export type ConnectionFault = 'connect-failure' | 'reset-before-response' | 'timeout' | 'other';

/** `none`: no body; `unsent`: a body none of whose bytes were read yet; `partial`: some of it was streamed. */
export type BodyState = 'none' | 'unsent' | 'partial';

export type RetryReason = 'connect-failure' | 'reset-before-response';

export type RetryDecision =
  | { readonly retry: false }
  | { readonly retry: true; readonly reason: RetryReason; readonly freshConnection: boolean };

export const IDEMPOTENT_METHODS: ReadonlySet<string> = new Set([
  'GET',
  'HEAD',
  'OPTIONS',
  'PUT',
  'DELETE',
  'TRACE',
]);

/** Connect failures move to another endpoint at most this many times per request. */
export const MAX_CONNECT_FAILOVERS = 4;
/** A request is sent again after a reset before the response at most this many times (once per endpoint). */
export const MAX_RESET_RETRIES = 3;

export interface RetryInput {
  readonly method: string;
  readonly body: BodyState;
  readonly fault: ConnectionFault;
  readonly connectFailovers: number;
  readonly resetRetries: number;
  /** The endpoint that failed had reset this request before: it is the endpoint, not a stale connection. */
  readonly endpointResetBefore: boolean;
}

const NO: RetryDecision = { retry: false };

export function decideConnectionRetry(input: RetryInput): RetryDecision {
  if (input.body === 'partial') return NO;
  switch (input.fault) {
    case 'connect-failure':
      return input.connectFailovers < MAX_CONNECT_FAILOVERS
        ? { retry: true, reason: 'connect-failure', freshConnection: false }
        : NO;
    case 'reset-before-response': {
      if (input.endpointResetBefore || input.resetRetries >= MAX_RESET_RETRIES) return NO;
      const safe = IDEMPOTENT_METHODS.has(input.method) || input.body === 'unsent';
      return safe ? { retry: true, reason: 'reset-before-response', freshConnection: true } : NO;
    }
    default:
      return NO;
  }
}

/**
 * The fault behind a failed attempt, from its kind (attempt-outcome.ts): a failure after the response began is
 * never retried here, nor is a pool this process closed under a request that had connected (it may have left).
 */
export function faultOf(kind: FailureKind, connected: boolean, responseStarted: boolean): ConnectionFault {
  const traits = FAILURES[kind];
  if (traits.balancer === 'timeout') return 'timeout';
  if (responseStarted || traits.retry === 'never') return 'other';
  if (kind === 'closed-locally' && connected) return 'other';
  return traits.retry;
}
