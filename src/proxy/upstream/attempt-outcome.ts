import type { AttemptResult } from '../../lb/balancer.ts';

/**
 * What one upstream attempt became: the data plane's own vocabulary, which the project's clients
 * (http1-upstream.ts, h2c-upstream.ts) raise directly and undici's errors are translated into at their boundary
 * (undici-failure.ts). Retry (connection-retry.ts), the balancer's health and outlier detection, the upstream
 * metrics and the access log read only this, never an error code.
 */

/** How an attempt failed. */
export type FailureKind =
  /** The connection could not be made: refused, unreachable, no route, a tunnel that could not be opened. */
  | 'refused'
  | 'connect-timeout'
  /** The TLS handshake with the backend failed (its certificate, or the handshake itself). */
  | 'tls-error'
  /** The connection (or the HTTP/2 session) died after the request went out and before any response byte. */
  | 'reset-before-response'
  /** The backend reset this request's HTTP/2 stream before answering (not REFUSED_STREAM): it had the request. */
  | 'stream-reset'
  /** The response was cut after its head: a connection closed or reset, or a stream reset, mid-body. */
  | 'reset-mid-body'
  /** No response byte (or no further body byte) within the response timeout, or the route's timeouts. */
  | 'response-timeout'
  /** A response no HTTP parser may accept (framing, header syntax, an upgrade nobody asked for, endless 1xx). */
  | 'protocol-error'
  /** This process closed the pool under the request (a table swap, shutdown), or aborted it. */
  | 'closed-locally'
  /** A request the gateway built badly (a header or path no upstream request can carry). */
  | 'local-error'
  /** The client went away (or its request body failed) while the attempt ran. */
  | 'client-gone';

/** What an attempt became: a response (of any status), or one failure. */
export type AttemptOutcome =
  | { readonly kind: 'response'; readonly status: number }
  | { readonly kind: FailureKind; readonly message?: string };

/** Which retry a failure allows when nothing of the body was streamed (connection-retry.ts decides). */
export type FailureRetry = 'connect-failure' | 'reset-before-response' | 'never';

export interface FailureTraits {
  /**
   * What the balancer (load estimate, health, outlier detection) and the upstream metrics see; `success` means
   * the failure is not the endpoint's and counts for nothing against it.
   */
  readonly balancer: AttemptResult;
  readonly retry: FailureRetry;
  /** The client's answer when nothing retries it: 504 for timeouts (RFC 9110 §15.6.5), 502 for the rest. */
  readonly status: 499 | 500 | 502 | 504;
}

/** Status recorded for requests whose client went away before the answer (nginx's convention). */
export const CLIENT_CLOSED = 499;

const CONNECT: FailureTraits = { balancer: 'connect-failure', retry: 'connect-failure', status: 502 };
const BROKEN: FailureTraits = { balancer: 'reset', retry: 'never', status: 502 };

export const FAILURES: Readonly<Record<FailureKind, FailureTraits>> = {
  refused: CONNECT,
  'connect-timeout': CONNECT,
  'tls-error': CONNECT,
  'reset-before-response': { balancer: 'reset', retry: 'reset-before-response', status: 502 },
  'stream-reset': BROKEN,
  'reset-mid-body': BROKEN,
  'protocol-error': BROKEN,
  'response-timeout': { balancer: 'timeout', retry: 'never', status: 504 },
  // Nothing of it reached the endpoint when it never connected: another endpoint may take it.
  'closed-locally': { balancer: 'success', retry: 'connect-failure', status: 502 },
  'local-error': { balancer: 'success', retry: 'never', status: 500 },
  'client-gone': { balancer: 'success', retry: 'never', status: CLIENT_CLOSED },
};

/** The balancer's result for an attempt: a response's by its status, a failure's by its kind. */
export function balancerResult(failure: FailureKind | undefined, status: number): AttemptResult {
  if (failure !== undefined) return FAILURES[failure].balancer;
  return status >= 500 ? 'http5xx' : 'success';
}

/** The outcome of an attempt that ended with `failure` (undefined: a response of `status`). */
export function outcomeOf(failure: FailureKind | undefined, status: number): AttemptOutcome {
  return failure === undefined ? { kind: 'response', status } : { kind: failure };
}

/**
 * A failed attempt, as the project's clients report it through a handler's `onError`. `code` keeps the code of
 * the error behind it (ECONNREFUSED, HPE_INVALID_CONSTANT, ...) for logs and tests only: nothing classifies by it.
 */
export class UpstreamFailure extends Error {
  readonly kind: FailureKind;
  readonly code: string | undefined;

  constructor(kind: FailureKind, message: string, cause?: Error) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'UpstreamFailure';
    this.kind = kind;
    this.code = codeOf(cause);
  }
}

/** The code of an error (Node's and undici's are strings), or undefined. */
export function codeOf(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * The failure an attempt's handler was given. Every client raises UpstreamFailure; anything else is a bug of
 * the gateway's own (an error no boundary translated), so it is the gateway's, never the endpoint's.
 */
export function failureOf(err: Error): UpstreamFailure {
  return err instanceof UpstreamFailure
    ? err
    : new UpstreamFailure('local-error', `unclassified upstream error: ${err.message}`, err);
}
