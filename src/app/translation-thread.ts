import { setImmediate as nextTurn } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { TranslateOptions } from '../gateway/options.ts';
import type { TranslationResult } from '../gateway/translate.ts';
import type { AnyResource, ResourceKind } from '../snapshot/resources.ts';
import type { Snapshot } from '../snapshot/snapshot.ts';
import { snapshotChanges } from '../snapshot/snapshot-changes.ts';
import { type ChunkedJson, decodeChunked } from './chunked-json.ts';

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
      readonly reset: boolean;
      readonly slicesOnly: boolean;
      readonly options: ThreadTranslateOptions;
    };

export type FromTranslationThread =
  | { readonly type: 'result'; readonly id: number; readonly result: ChunkedJson }
  | { readonly type: 'error'; readonly id: number; readonly message: string };

/** Objects per message: each postMessage serialises its objects on the serving thread in one go. */
const OBJECTS_PER_MESSAGE = 500;

/**
 * Translation on a worker thread (issue 45), where 10,000 routes cannot delay a request: the thread keeps a copy
 * of the last snapshot it was sent and is sent only what changed (by object identity, snapshot-changes.ts); it
 * translates with the same pure translate() and answers with the result as chunked JSON (chunked-json.ts), which
 * this thread parses a slice at a time. A thread that dies is started again with the whole snapshot; the
 * translation it was running fails (the reconciler keeps the table in force).
 */
export class TranslationThread {
  readonly #sliceMs: number;
  readonly #logger: Logger;
  #worker: Worker | undefined;
  /** The snapshot the thread's copy equals; undefined: it has none (send everything). */
  #sent: Snapshot | undefined;
  #nextId = 1;
  readonly #waiting = new Map<number, { resolve: (r: ChunkedJson) => void; reject: (e: Error) => void }>();
  #closed = false;

  constructor(options: { readonly sliceMs: number; readonly logger: Logger }) {
    this.#sliceMs = options.sliceMs;
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
    const reply = new Promise<ChunkedJson>((resolve, reject) => {
      this.#waiting.set(id, { resolve, reject });
    });
    const message: ToTranslationThread = {
      type: 'translate',
      id,
      reset: changes.reset,
      slicesOnly: changes.slicesOnly,
      options: { ...rest, localAddresses: isLocalAddress !== undefined },
    };
    worker.postMessage(message);
    return (await decodeChunked(await reply, this.#sliceMs)) as TranslationResult;
  }

  async close(): Promise<void> {
    this.#closed = true;
    const worker = this.#worker;
    this.#worker = undefined;
    await worker?.terminate();
  }

  #start(): Worker {
    if (this.#worker) return this.#worker;
    const worker = spawnTranslationWorker();
    worker.unref();
    worker.on('message', (message: FromTranslationThread) => {
      const waiting = this.#waiting.get(message.id);
      if (waiting === undefined) return;
      this.#waiting.delete(message.id);
      if (message.type === 'result') waiting.resolve(message.result);
      else waiting.reject(new Error(`translation failed in the translation thread: ${message.message}`));
    });
    const lost = (error: Error): void => {
      if (this.#worker !== worker) return;
      this.#worker = undefined;
      this.#sent = undefined;
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

/** From source (tsx) the thread registers tsx's loader first: a worker does not inherit the parent's hooks. */
function spawnTranslationWorker(): Worker {
  const extension = import.meta.url.slice(import.meta.url.lastIndexOf('.'));
  const entry = new URL(`./translation-worker-main${extension}`, import.meta.url);
  if (extension !== '.ts') return new Worker(entry);
  const code = `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(entry.href)}); })`;
  return new Worker(code, { eval: true });
}
