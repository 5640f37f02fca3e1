import type { CompiledAction } from '../compile/compile-actions.ts';
import { grpcTimeoutMs } from './grpc-local-reply.ts';

/**
 * The timers of one forwarded request, armed on the request path's deadline wheel (net/timer-wheel.ts). The
 * callbacks are module-level functions of the exchange, so a deadline allocated once serves every re-arming.
 */
export interface TimedExchange {
  /** HTTPRouteTimeouts.backendRequest elapsed on the current attempt. */
  attemptTimedOut(): void;
  /** HTTPRouteTimeouts.request (or the gRPC deadline) elapsed. */
  requestTimedOut(): void;
  /** The client read nothing of the response for the send timeout. */
  sendTimedOut(): void;
  /** A retry's backoff elapsed. */
  retryAfterBackoff(): void;
}

export function onAttemptTimer(exchange: TimedExchange): void {
  exchange.attemptTimedOut();
}

export function onRequestTimer(exchange: TimedExchange): void {
  exchange.requestTimedOut();
}

export function onSendTimer(exchange: TimedExchange): void {
  exchange.sendTimedOut();
}

export function onBackoffTimer(exchange: TimedExchange): void {
  exchange.retryAfterBackoff();
}

/** A response the client stops reading is cut after this long without progress, unless configured. */
export const DEFAULT_SEND_TIMEOUT_MS = 60_000;

/**
 * The request's whole-exchange timeout: a gRPC client's deadline (`grpcTimeout`, the grpc-timeout header's raw
 * value) bounds it like HTTPRouteTimeouts.request.
 */
export function requestTimeoutMs(
  grpcTimeout: string | undefined,
  action: CompiledAction,
): number | undefined {
  const deadlineMs = grpcTimeoutMs(grpcTimeout);
  return deadlineMs === undefined
    ? action.requestTimeoutMs
    : Math.min(deadlineMs, action.requestTimeoutMs ?? deadlineMs);
}
