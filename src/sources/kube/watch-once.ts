import type { Watch } from '@kubernetes/client-node';
import { KubeApiError } from '../../kube/api-client.ts';
import { isRecord } from '../decode.ts';

export type WatchEnd =
  | { readonly kind: 'closed'; readonly events: number; readonly durationMs: number }
  | { readonly kind: 'expired' }
  | { readonly kind: 'error'; readonly error: unknown };

export interface WatchRequest {
  readonly watch: Watch;
  readonly path: string;
  readonly resourceVersion: string;
  /** The server-side timeout asked for, before the random stretch. */
  readonly watchTimeoutSeconds: number;
  /** Ends the watch as `closed`. */
  readonly stop: AbortSignal;
}

export interface WatchHandlers {
  /** Every event as it arrives, ERROR included. */
  readonly onEvent: (type: string) => void;
  /** An ADDED, MODIFIED, DELETED or BOOKMARK event. */
  readonly onObject: (type: string, obj: unknown) => void;
  /** An ERROR event other than 410 Gone (which ends the watch as `expired`). */
  readonly onErrorEvent: (status: unknown) => void;
}

/**
 * One watch request, from `resourceVersion` until the server closes it, it fails, or `stop` fires; resolves
 * (never rejects) with how it ended. A watchdog cuts a connection silent for longer than the server-side
 * timeout plus slack (a half-open connection).
 */
export function watchOnce(request: WatchRequest, handlers: WatchHandlers): Promise<WatchEnd> {
  const { stop: signal, path } = request;
  const startedAt = performance.now();
  return new Promise<WatchEnd>((resolve) => {
    let events = 0;
    let expired = false;
    let settled = false;
    const controller = new AbortController();
    // Randomised like client-go's minWatchTimeout, so replicas do not reconnect in lockstep.
    const timeoutSeconds = Math.round(request.watchTimeoutSeconds * (1 + Math.random()));
    let watchdog: NodeJS.Timeout | undefined;
    const arm = (): void => {
      clearTimeout(watchdog);
      watchdog = setTimeout(() => controller.abort(), (timeoutSeconds + 30) * 1000);
    };
    const closed = (): WatchEnd => ({ kind: 'closed', events, durationMs: performance.now() - startedAt });
    const onStop = (): void => finish(closed());
    const finish = (end: WatchEnd): void => {
      if (settled) return;
      settled = true;
      clearTimeout(watchdog);
      signal.removeEventListener('abort', onStop);
      controller.abort();
      resolve(end);
    };
    const onEvent = (type: string, obj: unknown): void => {
      if (settled) return;
      arm();
      handlers.onEvent(type);
      if (type === 'ERROR') {
        const code = isRecord(obj) ? obj.code : undefined;
        if (code === 410) expired = true;
        else handlers.onErrorEvent(obj);
        return;
      }
      events++;
      handlers.onObject(type, obj);
    };
    const onDone = (err: unknown): void => {
      if (expired) finish({ kind: 'expired' });
      else if (err) {
        const status = isRecord(err) && typeof err.statusCode === 'number' ? err.statusCode : 0;
        if (status === 410) finish({ kind: 'expired' });
        else if (status !== 0) {
          finish({
            kind: 'error',
            error: new KubeApiError(
              'GET',
              path,
              status,
              undefined,
              err instanceof Error ? err.message : 'watch failed',
            ),
          });
        } else finish({ kind: 'error', error: err });
      } else finish(closed());
    };
    arm();
    request.watch
      .watch(
        path,
        { resourceVersion: request.resourceVersion, allowWatchBookmarks: true, timeoutSeconds },
        onEvent,
        onDone,
      )
      .then((req) => {
        if (settled || signal.aborted) req.abort();
        else controller.signal.addEventListener('abort', () => req.abort());
      })
      .catch((err: unknown) => finish({ kind: 'error', error: err }));
    signal.addEventListener('abort', onStop);
  });
}
