import type { AttemptResult } from '../../lb/balancer.ts';

/**
 * What a failed upstream attempt was: the balancer's outcome for the endpoint, and the status the client gets
 * when nothing retries it (504 for timeouts, 502 for the rest: RFC 9110 §15.6.5 and §15.6.3).
 */

/** Status recorded for requests whose client went away before the answer (nginx's convention). */
export const CLIENT_CLOSED = 499;

export class AttemptTimeoutError extends Error {
  readonly code = 'CSG_ATTEMPT_TIMEOUT';
}

export class RetryStatusError extends Error {
  readonly code = 'CSG_RETRY_STATUS';
}

export type CodedError = Error & { code?: unknown };

export function errorCode(err: CodedError): string {
  return typeof err.code === 'string' ? err.code : '';
}

/** Errors raised before anything reached the endpoint, by the request we built rather than by the network. */
export function isLocalError(err: CodedError): boolean {
  return (
    err.code === 'UND_ERR_INVALID_ARG' ||
    err.code === 'ERR_INVALID_CHAR' ||
    err.code === 'ERR_INVALID_ARG_TYPE'
  );
}

/** The endpoint's outcome for an attempt that ended with `err`; `connected`: the connection was established. */
export function classifyAttemptError(err: CodedError, connected: boolean): AttemptResult {
  const code = errorCode(err);
  if (
    code === 'CSG_ATTEMPT_TIMEOUT' ||
    code === 'UND_ERR_HEADERS_TIMEOUT' ||
    code === 'UND_ERR_BODY_TIMEOUT'
  ) {
    return 'timeout';
  }
  if (code === 'UND_ERR_CONNECT_TIMEOUT') return 'connect-failure';
  // The gateway's own error (a request undici refuses to send) says nothing about the endpoint.
  if (isLocalError(err)) return 'success';
  return connected ? 'reset' : 'connect-failure';
}

/** A pool this process closed (a table swap) under a request that never connected: not the endpoint's fault. */
export function isClosedLocally(code: string, connected: boolean): boolean {
  return !connected && (code === 'UND_ERR_CLOSED' || code === 'UND_ERR_DESTROYED');
}

/** The gateway's answer to a failure nothing retries. */
export function failureStatus(result: AttemptResult): 502 | 504 {
  return result === 'timeout' ? 504 : 502;
}
