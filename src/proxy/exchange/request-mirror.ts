import type { IncomingMessage } from 'node:http';
import { PassThrough, type Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import type { AttemptOutcome } from '../../lb/balancer.ts';
import type { CompiledMirror } from '../compile/compile-actions.ts';
import type { CompiledBackend } from '../compile/compile-backends.ts';
import type { UpstreamPools } from '../upstream/upstream-pools.ts';
import { type UpstreamRequestHead, upstreamDispatchOptions } from './upstream-request.ts';

/** A mirrored copy's answer is read and thrown away (RequestMirror is fire-and-forget). */
class DiscardHandler implements Dispatcher.DispatchHandler {
  readonly #end: (outcome: AttemptOutcome) => void;
  readonly #body: PassThrough | null;
  readonly #startMs = performance.now();
  #status = 0;

  constructor(end: (outcome: AttemptOutcome) => void, body: PassThrough | null) {
    this.#end = end;
    this.#body = body;
  }

  onConnect(): void {}
  onHeaders(statusCode: number): boolean {
    this.#status = statusCode;
    return true;
  }
  onData(): boolean {
    return true;
  }
  onComplete(): void {
    this.#end({
      result: this.#status >= 500 ? 'http5xx' : 'success',
      latencyMs: performance.now() - this.#startMs,
    });
  }
  onError(): void {
    // Destroying the copy's body unpipes it, so a dead mirror never holds back the client's request.
    this.#body?.destroy();
    this.#end({ result: 'reset', latencyMs: performance.now() - this.#startMs });
  }
}

/**
 * Sends a copy to each mirror backend that the percentage selects, without waiting for or reading its
 * answer. A body is teed: the request stream feeds the main attempt and the copy through PassThroughs.
 * Returns the body the main attempt sends: `body` itself when nothing was teed.
 */
export function sendMirrors(
  pools: UpstreamPools,
  req: IncomingMessage,
  head: UpstreamRequestHead,
  body: Readable | null,
  mirrors: readonly CompiledMirror[],
): Readable | null {
  const selected: CompiledBackend[] = [];
  for (const mirror of mirrors) {
    if (mirror.backend !== undefined && (mirror.fraction >= 1 || Math.random() < mirror.fraction)) {
      selected.push(mirror.backend);
    }
  }
  if (selected.length === 0) return body;
  let mainBody = body;
  let bodies: PassThrough[] | undefined;
  if (body !== null) {
    const main = new PassThrough();
    body.pipe(main);
    mainBody = main;
    bodies = [];
  }
  for (const backend of selected) {
    const endpoint = backend.balancer.pick();
    if (endpoint === undefined) continue;
    let copy: PassThrough | null = null;
    if (bodies !== undefined && body !== null) {
      copy = new PassThrough({ highWaterMark: 1 << 20 });
      copy.on('error', () => {});
      body.pipe(copy);
      bodies.push(copy);
    }
    const slot = pools.reserve(endpoint);
    if (slot === undefined) continue;
    const end = backend.balancer.begin(endpoint);
    pools.get(backend.protocol, endpoint, backend.cluster.tls).dispatch(
      upstreamDispatchOptions(head, req.method, copy, backend.cluster.tls),
      new DiscardHandler((outcome) => {
        pools.release(slot);
        end(outcome);
      }, copy),
    );
  }
  return mainBody;
}
