import { createInterface } from 'node:readline';
import { isRecord } from '../snapshot/json-object.ts';
import { type KubeApiClient, KubeApiError } from './api-client.ts';

export type WatchEnd =
  | { readonly kind: 'closed'; readonly events: number; readonly durationMs: number }
  | { readonly kind: 'expired' }
  | { readonly kind: 'error'; readonly error: unknown };

export interface WatchRequest {
  readonly client: KubeApiClient;
  readonly path: string;
  readonly resourceVersion: string;
  /** The list's fieldSelector: a watch must select what its list did. */
  readonly fieldSelector?: string | undefined;
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
        // A real API server ends the stream after this event; a relist need not wait for that.
        if (code === 410) finish({ kind: 'expired' });
        else handlers.onErrorEvent(obj);
        return;
      }
      events++;
      handlers.onObject(type, obj);
    };
    const onDone = (err: unknown): void => {
      if (err instanceof KubeApiError && err.statusCode === 410) finish({ kind: 'expired' });
      else if (err) finish({ kind: 'error', error: err });
      else finish(closed());
    };
    arm();
    request.client
      .stream(
        path,
        {
          watch: 1,
          resourceVersion: request.resourceVersion,
          allowWatchBookmarks: true,
          timeoutSeconds,
          fieldSelector: request.fieldSelector,
        },
        controller.signal,
      )
      .then((response) => {
        // One JSON event per line (the watch wire format); a line that is not one ends the watch as an error.
        const lines = createInterface({ input: response, crlfDelay: Number.POSITIVE_INFINITY });
        lines.on('line', (line) => {
          if (settled || line.trim() === '') return;
          let event: unknown;
          try {
            event = JSON.parse(line);
          } catch {
            onDone(new Error(`watch ${path}: an event is not JSON`));
            return;
          }
          if (!isRecord(event) || typeof event.type !== 'string') {
            onDone(new Error(`watch ${path}: an event without a type`));
            return;
          }
          onEvent(event.type, event.object);
        });
        lines.once('close', () => onDone(undefined));
        // A connection reset mid-watch, or our own abort: the response errs, and readline passes it on while it is
        // open; both are listened to, so neither error goes unhandled after the other has closed.
        const onStreamError = (err: Error): void => onDone(controller.signal.aborted ? undefined : err);
        response.on('error', onStreamError);
        lines.on('error', onStreamError);
      })
      .catch((err: unknown) => onDone(controller.signal.aborted ? undefined : err));
    signal.addEventListener('abort', onStop);
  });
}
