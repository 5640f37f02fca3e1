import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import { ResultPatch } from '../controller/result-delta.ts';
import type { TranslateOptions } from '../gateway/options.ts';
import type { TranslationResult } from '../gateway/translate.ts';
import { runInSlices, type Steps } from '../ir/steps.ts';
import type { AnyResource, ResourceKind } from '../snapshot/resources.ts';
import type { Snapshot } from '../snapshot/snapshot.ts';
import { snapshotChanges } from '../snapshot/snapshot-changes.ts';
import { type PackedTexts, unpackTexts } from './packed-texts.ts';
import { spawnThread } from './spawn-thread.ts';

/** TranslateOptions as a message can carry them: `isLocalAddress` becomes a flag the thread answers itself. */
export type ThreadTranslateOptions = Omit<TranslateOptions, 'isLocalAddress'> & {
  readonly localAddresses: boolean;
};

export type ToTranslationThread =
  /** Part of the next snapshot's changes (a big change is sent in several, the serving loop free between). */
  | {
      readonly type: 'objects';
      readonly set: readonly AnyResource[];
      readonly removed: readonly (readonly [ResourceKind, string])[];
    }
  /** The changes sent since the last translate make the next snapshot: translate it. */
  | {
      readonly type: 'translate';
      readonly id: number;
      /** The id of the result the serving thread holds (0: none): the answer is its difference from that one. */
      readonly base: number;
      readonly reset: boolean;
      readonly slicesOnly: boolean;
      readonly options: ThreadTranslateOptions;
    };

export type FromTranslationThread =
  /** `pieces`: the result as a delta (result-delta.ts) from result `base` (0: from nothing). */
  | { readonly type: 'result'; readonly id: number; readonly base: number; readonly pieces: PackedTexts }
  | { readonly type: 'error'; readonly id: number; readonly message: string };

/** Objects per message: each postMessage serialises its objects on the serving thread in one go. */
const OBJECTS_PER_MESSAGE = 500;

/**
 * Translation on a worker thread (issue 45), where 10,000 routes cannot delay a request: the thread keeps a copy
 * of the last snapshot it was sent and is sent only what changed (by object identity, snapshot-changes.ts); it
 * translates with the same pure translate() and answers with the result's difference from the last result it
 * sent (result-delta.ts), which this thread parses a slice at a time and lays over the last result it has: every
 * part that did not change stays the same object. A thread that dies is started again with the whole snapshot
 * and answers with the whole result; the translation it was running fails (the reconciler keeps the table in
 * force). A delta that does not fit the result kept here fails that translation and the next asks for the whole.
 */
export class TranslationThread {
  readonly #sliceMs: number;
  readonly #nice: number;
  readonly #logger: Logger;
  #worker: Worker | undefined;
  /** The snapshot the thread's copy equals; undefined: it has none (send everything). */
  #sent: Snapshot | undefined;
  #nextId = 1;
  /** The last result decoded, the base of the next delta; undefined: ask for the whole result. */
  #base: { readonly id: number; readonly result: TranslationResult } | undefined;
  readonly #waiting = new Map<
    number,
    { resolve: (r: Extract<FromTranslationThread, { type: 'result' }>) => void; reject: (e: Error) => void }
  >();
  #closed = false;

  /**
   * `nice`: how many steps below the serving thread the thread runs (translation-thread-priority.ts; 0: the
   * same priority).
   */
  constructor(options: { readonly sliceMs: number; readonly nice?: number; readonly logger: Logger }) {
    this.#sliceMs = options.sliceMs;
    this.#nice = options.nice ?? 0;
    this.#logger = options.logger.child({ component: 'translation-thread' });
  }

  /** The reconciler runs one translation at a time; so must its callers. */
  async translate(snapshot: Snapshot, options: TranslateOptions): Promise<TranslationResult> {
    if (this.#closed) throw new Error('the translation thread is closed');
    const worker = this.#start();
    const changes = snapshotChanges(this.#sent, snapshot);
    this.#sent = snapshot;
    let sliceEnd = performance.now() + this.#sliceMs;
    const removed = changes.removed.length > 0 ? changes.removed : [];
    for (let i = 0; i < changes.set.length || (i === 0 && removed.length > 0); i += OBJECTS_PER_MESSAGE) {
      const message: ToTranslationThread = {
        type: 'objects',
        set: changes.set.slice(i, i + OBJECTS_PER_MESSAGE),
        removed: i === 0 ? removed : [],
      };
      worker.postMessage(message);
      if (this.#sliceMs > 0 && performance.now() >= sliceEnd) {
        await nextTurn();
        sliceEnd = performance.now() + this.#sliceMs;
      }
    }
    const id = this.#nextId++;
    const { isLocalAddress, ...rest } = options;
    const reply = new Promise<Extract<FromTranslationThread, { type: 'result' }>>((resolve, reject) => {
      this.#waiting.set(id, { resolve, reject });
    });
    const base = this.#base;
    const message: ToTranslationThread = {
      type: 'translate',
      id,
      base: base?.id ?? 0,
      reset: changes.reset,
      slicesOnly: changes.slicesOnly,
      options: { ...rest, localAddresses: isLocalAddress !== undefined },
    };
    worker.postMessage(message);
    const answer = await reply;
    // Until this answer is laid over its base, no result here is one the thread's next delta may start from.
    this.#base = undefined;
    if (answer.base !== 0 && answer.base !== base?.id)
      throw new Error(`the translation thread answered against result ${answer.base}, not ${base?.id ?? 0}`);
    const result = await runInSlices(
      this.#decode(answer, answer.base === 0 ? undefined : base?.result),
      this.#sliceMs,
    );
    this.#base = { id, result };
    return result;
  }

  /** Steps: a pause is possible after each piece parsed and each unit laid over the base. */
  *#decode(
    answer: Extract<FromTranslationThread, { type: 'result' }>,
    base: TranslationResult | undefined,
  ): Steps<TranslationResult> {
    const patch = new ResultPatch();
    for (const piece of unpackTexts(answer.pieces)) {
      patch.add(piece);
      yield;
    }
    return yield* patch.applyTo(base);
  }

  async close(): Promise<void> {
    this.#closed = true;
    const worker = this.#worker;
    this.#worker = undefined;
    await worker?.terminate();
  }

  #start(): Worker {
    if (this.#worker) return this.#worker;
    const worker = spawnThread('translation-worker-main', { nice: this.#nice });
    worker.unref();
    worker.on('message', (message: FromTranslationThread) => {
      const waiting = this.#waiting.get(message.id);
      if (waiting === undefined) return;
      this.#waiting.delete(message.id);
      if (message.type === 'result') waiting.resolve(message);
      else waiting.reject(new Error(`translation failed in the translation thread: ${message.message}`));
    });
    const lost = (error: Error): void => {
      if (this.#worker !== worker) return;
      this.#worker = undefined;
      this.#sent = undefined;
      this.#base = undefined;
      if (!this.#closed) this.#logger.error({ err: error }, 'translation thread stopped; starting another');
      for (const waiting of this.#waiting.values()) waiting.reject(error);
      this.#waiting.clear();
    };
    worker.on('error', lost);
    worker.on('exit', (code) => lost(new Error(`the translation thread exited with code ${code}`)));
    this.#worker = worker;
    return worker;
  }
}
