import type { Duplex } from 'node:stream';
import { UpstreamFailure } from './attempt-outcome.ts';

/** Opens a byte stream to the endpoint: the Duplex the HTTP/2 session runs on, or why there is none. */
export type H2cConnect = (callback: (err: Error | null, socket: Duplex | null) => void) => void;

/** What both h2c pools (node:http2's and the js codec's) keep of a connection while it is being made. */
export interface DialingSession {
  error: Error | undefined;
  connectTimer: NodeJS.Timeout | undefined;
}

/** What the pool does with the dial's answer. */
export interface DialAnswer<S extends DialingSession> {
  /** The session is no longer the pool's. */
  forget(session: S): void;
  /** The requests queued on it fail with `failure` (a connect failure, retried elsewhere). */
  failPending(session: S, failure: Error): void;
  /** The connection is there: HTTP/2 starts on it. */
  open(session: S, socket: Duplex): void;
}

/**
 * Dials a session's connection through `connect` (a tunnel to another network): a connection that failed is a
 * connect failure of the endpoint; one that arrives after the session timed out, closed or was destroyed is
 * dropped, since nothing waits for it any more.
 */
export function dialSession<S extends DialingSession>(
  session: S,
  connect: H2cConnect,
  answer: DialAnswer<S>,
): void {
  connect((err, socket) => {
    if (session.error !== undefined) {
      socket?.destroy();
      answer.forget(session);
      return;
    }
    if (err !== null || socket === null) {
      clearTimeout(session.connectTimer);
      const failure = new UpstreamFailure(
        'refused',
        `HTTP/2: connection failed (${err?.message ?? 'no connection'})`,
        err ?? undefined,
      );
      session.error = failure;
      answer.forget(session);
      answer.failPending(session, failure);
      return;
    }
    answer.open(session, socket);
  });
}
