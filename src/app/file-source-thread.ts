import { setTimeout as sleep } from 'node:timers/promises';
import type { Worker } from 'node:worker_threads';
import type { Level, Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { AnyResource, ResourceKind } from '../snapshot/resources.ts';
import type { Snapshot } from '../snapshot/snapshot.ts';
import { SnapshotMirror } from '../snapshot/snapshot-changes.ts';
import { type Source, SourceError } from '../snapshot/source.ts';
import type { FileSourceOptions } from '../sources/file/file-source.ts';
import type { ManifestProblem } from '../sources/file/manifest-parser.ts';
import { ManifestProblemLog } from '../sources/file/manifest-problem-log.ts';
import { spawnThread } from './spawn-thread.ts';

/** The file source's options a message can carry (no logger, registry, validator or reader: the thread has its own). */
export type ThreadFileSourceOptions = Pick<
  FileSourceOptions,
  'dir' | 'debounceMs' | 'maxFileBytes' | 'maxObjects' | 'serviceImportGroups' | 'fieldValidation'
>;

export interface FileSourceThreadData {
  readonly options: ThreadFileSourceOptions;
  /** Steps below the serving thread's priority (translation-thread-priority.ts). */
  readonly nice: number;
  /** The serving thread's log level: lines below it are not even sent. */
  readonly logLevel: string;
}

export type FromFileSourceThread =
  /** One log line of the thread's pino, as JSON: logged here with this process's logger. */
  | { readonly type: 'log'; readonly line: string }
  | {
      readonly type: 'problems';
      readonly problems: readonly ManifestProblem[];
      readonly invalidObjects: number | undefined;
    }
  /** Part of the next snapshot's changes (a reload of many files is sent in several). */
  | {
      readonly type: 'objects';
      readonly set: readonly AnyResource[];
      readonly removed: readonly (readonly [ResourceKind, string])[];
    }
  /** The changes sent since the last snapshot make the next one. */
  | { readonly type: 'snapshot'; readonly reset: boolean; readonly slicesOnly: boolean }
  | { readonly type: 'started' }
  | { readonly type: 'failed'; readonly code: string | undefined; readonly message: string }
  | { readonly type: 'stopped' };

export type ToFileSourceThread = { readonly type: 'stop' };

/** How long a stop waits for the thread's last reload before it is ended. */
const STOP_WAIT_MS = 5_000;
/** A thread that died is started again after this long (a thread that dies at once does not spin). */
const RESTART_DELAY_MS = 1_000;

/**
 * The manifests folder read on a thread of its own (issue 45): stat, read, YAML parsing, CRD validation, the
 * duplicate check and the object store (sources/file/file-source.ts) run where they cannot delay a request; the
 * thread sends only the objects each reload changed, and this thread makes the next Snapshot from the last one
 * with them (SnapshotMirror: every other object the same object, so the translation thread is sent only those
 * too). Problems are sent with each reload and logged and counted here (ManifestProblemLog), as the source on
 * this thread does. A thread that dies is started again and sends the whole folder. Opt-in
 * (`--file-source-thread`): the isolate costs about 10 MiB, and the source in slices on the serving thread kept
 * route edits at 10,000 routes within their targets.
 */
export class FileSourceThread implements Source {
  readonly name = 'file';
  readonly #options: ThreadFileSourceOptions;
  readonly #nice: number;
  readonly #spawnThread: typeof spawnThread;
  readonly #logger: Logger;
  readonly #problemLog: ManifestProblemLog;
  readonly #mirror = new SnapshotMirror();
  #set: AnyResource[] = [];
  #removed: (readonly [ResourceKind, string])[] = [];
  #worker: Worker | undefined;
  #stopping = false;
  #restart: NodeJS.Timeout | undefined;

  constructor(
    options: ThreadFileSourceOptions & {
      readonly logger: Logger;
      readonly registry?: Registry;
      readonly nice?: number;
      /** Starts the thread (tests wrap it to reach the Worker). */
      readonly spawn?: typeof spawnThread;
    },
  ) {
    const { logger, registry, nice, spawn, ...rest } = options;
    this.#options = rest;
    this.#spawnThread = spawn ?? spawnThread;
    this.#nice = nice ?? 0;
    this.#logger = logger;
    this.#problemLog = new ManifestProblemLog(
      logger.child({ component: 'file-source', dir: options.dir }),
      registry,
    );
  }

  /** Problems found in the last reload (syntax errors, invalid objects), each naming file and line. */
  get problems(): readonly ManifestProblem[] {
    return this.#problemLog.problems;
  }

  start(onSnapshot: (snapshot: Snapshot) => void): Promise<void> {
    return this.#spawn(onSnapshot);
  }

  async stop(): Promise<void> {
    this.#stopping = true;
    clearTimeout(this.#restart);
    const worker = this.#worker;
    this.#worker = undefined;
    if (worker === undefined) return;
    const stopped = new Promise<void>((resolve) => {
      worker.on('message', (message: FromFileSourceThread) => {
        if (message.type === 'stopped') resolve();
      });
      worker.once('exit', () => resolve());
    });
    worker.postMessage({ type: 'stop' } satisfies ToFileSourceThread);
    await Promise.race([stopped, sleep(STOP_WAIT_MS, undefined, { ref: false })]);
    await worker.terminate();
  }

  /** Resolves when the thread's first reading is applied; rejects when it could not read the folder. */
  #spawn(onSnapshot: (snapshot: Snapshot) => void): Promise<void> {
    const data: FileSourceThreadData = {
      options: this.#options,
      nice: this.#nice,
      logLevel: this.#logger.level,
    };
    const worker = this.#spawnThread('file-source-worker-main', data);
    worker.unref();
    this.#worker = worker;
    return new Promise<void>((resolve, reject) => {
      let started = false;
      worker.on('message', (message: FromFileSourceThread) => {
        if (this.#worker !== worker) return;
        switch (message.type) {
          case 'log':
            this.#log(message.line);
            break;
          case 'problems':
            this.#problemLog.report(message.problems, message.invalidObjects);
            break;
          case 'objects':
            for (const object of message.set) this.#set.push(object);
            for (const key of message.removed) this.#removed.push(key);
            break;
          case 'snapshot': {
            const { reset, slicesOnly } = message;
            const snapshot = this.#mirror.apply({
              reset,
              slicesOnly,
              set: this.#set,
              removed: this.#removed,
            });
            this.#set = [];
            this.#removed = [];
            onSnapshot(snapshot);
            break;
          }
          case 'started':
            started = true;
            resolve();
            break;
          case 'failed':
            reject(
              message.code === undefined
                ? new Error(message.message)
                : new SourceError(message.code, message.message),
            );
            break;
        }
      });
      const lost = (error: Error): void => {
        if (this.#worker !== worker) return;
        this.#worker = undefined;
        this.#set = [];
        this.#removed = [];
        if (!started) {
          reject(error);
          return;
        }
        if (this.#stopping) return;
        this.#logger.error({ err: error }, 'file source thread stopped; starting another');
        this.#restartLater(onSnapshot);
      };
      worker.on('error', lost);
      worker.on('exit', (code) => lost(new Error(`the file source thread exited with code ${code}`)));
    });
  }

  /** Until a thread starts again: a folder that cannot be read now (moved, unmounted) may come back. */
  #restartLater(onSnapshot: (snapshot: Snapshot) => void): void {
    this.#restart = setTimeout(() => {
      if (this.#stopping) return;
      this.#spawn(onSnapshot).catch((failed: unknown) => {
        this.#logger.error({ err: failed }, 'starting the file source thread again failed; trying again');
        if (!this.#stopping) this.#restartLater(onSnapshot);
      });
    }, RESTART_DELAY_MS);
    this.#restart.unref();
  }

  /** A line of the thread's pino, logged by this process's logger at its level. */
  #log(line: string): void {
    let record: Record<string, unknown>;
    try {
      record = JSON.parse(line) as Record<string, unknown>;
    } catch {
      return;
    }
    const { level, msg, ...fields } = record;
    const label = typeof level === 'number' ? this.#logger.levels.labels[level] : undefined;
    if (label === undefined || !LEVELS.has(label)) return;
    this.#logger[label as Level](fields, typeof msg === 'string' ? msg : '');
  }
}

const LEVELS = new Set<string>(['fatal', 'error', 'warn', 'info', 'debug', 'trace']);
