import type { Logger } from 'pino';
import { isRecord } from '../snapshot/json-object.ts';
import type { AnyResource } from '../snapshot/resources.ts';
import { groupVersionPath, type KubeApiClient, KubeApiError } from './api-client.ts';
import { Backoff, sleep } from './backoff.ts';
import type { ResolvedKind } from './discovery.ts';
import type { Normalize } from './normalize.ts';
import { ReflectorStore, type StoredObject } from './reflector-store.ts';
import { kindLabel } from './resource-kinds.ts';
import { type WatchEnd, type WatchHandlers, watchOnce } from './watch-once.ts';

export interface ReflectorOptions {
  readonly client: KubeApiClient;
  readonly resolved: ResolvedKind<string>;
  /** Validates and trims one object; the kube source's normalizeObject by default. */
  readonly normalize?: Normalize;
  readonly logger: Logger;
  /**
   * The set of objects changed in a way that may change the output: by one watch event (`key`, the object's
   * `namespace/name`), or by a list (no key: anything may have changed).
   */
  readonly onChange: (key?: string) => void;
  /** The first list succeeded. */
  readonly onSynced: () => void;
  /** A lasting problem (RBAC denial), or `undefined` once it is gone. */
  readonly onProblem: (problem: string | undefined) => void;
  /** The server no longer serves the resource (its CRD was removed). */
  readonly onGone: () => void;
  readonly countEvent: (type: string) => void;
  /**
   * A list or watch failed (the error, e.g. a KubeApiError with the status), or works again (`undefined`) after a
   * failure: lets a caller mark its cluster stale or renew credentials on a 401.
   */
  readonly onHealth?: (failure: unknown) => void;
  /**
   * The level of the failure lines (default `warn`); `debug` when the caller reports the failure itself (a fleet
   * member's state change). Either way a failure that goes on is logged when it starts, then at most once per
   * `backoffMaxMs` (with the retries between), and its end once.
   */
  readonly failureLogLevel?: 'warn' | 'debug';
  /** The clock of that throttle (default Date.now). */
  readonly now?: () => number;
  readonly watchTimeoutSeconds: number;
  readonly backoffInitialMs: number;
  readonly backoffMaxMs: number;
  readonly pageSize: number;
}

/**
 * List, then watch from the list's resourceVersion, for one resource; like client-go's Reflector.
 * - A watch that ends cleanly (server timeout, dropped connection) resumes from the last resourceVersion seen,
 *   including bookmarks, so nothing is missed and nothing is replayed.
 * - 410 Gone (history compacted) relists; the list replaces the store, so deletions missed meanwhile show up.
 * - Errors back off exponentially with jitter; 403 is reported as a problem naming the missing permission.
 * - Objects failing envelope validation are logged and left out; they never stop the loop.
 * The objects live in a ReflectorStore (reflector-store.ts); one watch request is watchOnce (watch-once.ts).
 */
export class Reflector {
  readonly #o: ReflectorOptions;
  readonly #store: ReflectorStore;
  readonly #stop = new AbortController();
  readonly #handlers: WatchHandlers;
  readonly #backoff: Backoff;
  readonly #path: string;
  readonly #label: string;
  #resourceVersion = '';
  #phase: 'list' | 'watch' = 'list';
  #synced = false;
  #problem: string | undefined;
  #failing = false;
  /** The last failure line: when, and the retries since (not each logged). Undefined while nothing fails. */
  #failureLog: { atMs: number; retries: number } | undefined;
  #loop: Promise<void> | undefined;

  constructor(options: ReflectorOptions) {
    this.#o = options;
    this.#backoff = new Backoff(options.backoffInitialMs, options.backoffMaxMs);
    const { watched, version } = options.resolved;
    this.#path = `${groupVersionPath(watched.group, version)}/${watched.plural}`;
    this.#label = kindLabel(watched);
    this.#store = new ReflectorStore({
      apiVersion: watched.group ? `${watched.group}/${version}` : version,
      kind: watched.kind,
      label: this.#label,
      logger: options.logger,
      ...(options.normalize ? { normalize: options.normalize } : {}),
    });
    this.#handlers = {
      onEvent: (type) => this.#o.countEvent(type),
      onErrorEvent: (status) => this.#o.logger.warn({ resource: this.#label, status }, 'watch error event'),
      onObject: (type, obj) => {
        this.#backoff.reset();
        this.#recovered();
        this.#apply(type, obj);
      },
    };
  }

  get synced(): boolean {
    return this.#synced;
  }

  get problem(): string | undefined {
    return this.#problem;
  }

  get resolved(): ResolvedKind<string> {
    return this.#o.resolved;
  }

  /** Malformed objects currently left out, for problems in /config_dump. */
  invalidObjects(): ReadonlyMap<string, string> {
    return this.#store.invalidObjects();
  }

  /** The current object of `namespace/name` (or `name`), undefined when absent or malformed. */
  get(key: string): AnyResource | undefined {
    return this.#store.get(key)?.object;
  }

  objects(): IterableIterator<StoredObject> {
    return this.#store.values();
  }

  /**
   * Stores `obj` (as this resource's normalize makes it) as a MODIFIED event would, without telling `onChange`:
   * for an object fetched on its own, or one to be normalized again. True when the stored object changed.
   */
  refresh(obj: unknown): boolean {
    return this.#store.apply('MODIFIED', obj) !== undefined;
  }

  start(): void {
    this.#loop ??= this.#run();
  }

  async stop(): Promise<void> {
    // Aborting `#stop` also ends the watch in flight (watchOnce listens to it).
    this.#stop.abort();
    await this.#loop;
  }

  async #run(): Promise<void> {
    const signal = this.#stop.signal;
    while (!signal.aborted) {
      try {
        if (!this.#resourceVersion) await this.#list();
        const end = await this.#watchOnce();
        if (signal.aborted) return;
        if (end.kind === 'expired') {
          this.#o.logger.info({ resource: this.#label }, 'watch history expired (410 Gone); relisting');
          this.#o.countEvent('RELIST');
          this.#resourceVersion = '';
          continue;
        }
        if (end.kind === 'error') throw end.error;
        // A watch that ends at once without a single event is treated like a failure, so a server that keeps
        // closing connections is not hammered; one that ran its course (timeoutSeconds) resumes at once.
        if (end.events === 0 && end.durationMs < 1000) await sleep(this.#backoff.next(), signal);
      } catch (err) {
        if (signal.aborted) return;
        if (err instanceof KubeApiError && err.statusCode === 410) {
          this.#resourceVersion = '';
          continue;
        }
        if (err instanceof KubeApiError && err.statusCode === 404) {
          this.#o.logger.warn({ resource: this.#label }, 'resource is no longer served by the API server');
          this.#o.onGone();
          return;
        }
        this.#report(err);
        this.#failing = true;
        this.#o.onHealth?.(err);
        await sleep(this.#backoff.next(), signal);
      }
    }
  }

  #report(err: unknown): void {
    if (err instanceof KubeApiError && err.statusCode === 403) {
      const verb = this.#phase;
      const { group } = this.#o.resolved.watched;
      const problem = `RBAC: forbidden to ${verb} ${this.#o.resolved.watched.plural} in API group "${group}" (grant verbs get, list, watch on ${this.#label} cluster-wide): ${err.message}`;
      if (problem !== this.#problem) this.#o.logger.error({ resource: this.#label, verb, group }, problem);
      this.#setProblem(problem);
      return;
    }
    const now = (this.#o.now ?? Date.now)();
    const last = this.#failureLog;
    if (last !== undefined && now - last.atMs < this.#o.backoffMaxMs) {
      last.retries++;
      return;
    }
    const level = this.#o.failureLogLevel ?? 'warn';
    const fields = { resource: this.#label, err: err instanceof Error ? err.message : String(err) };
    if (last === undefined) this.#o.logger[level](fields, 'list/watch failed; retrying');
    else
      this.#o.logger[level]({ ...fields, retries: last.retries + 1 }, 'list/watch still failing; retrying');
    this.#failureLog = { atMs: now, retries: 0 };
  }

  #recovered(): void {
    if (!this.#failing) return;
    this.#failing = false;
    if (this.#failureLog !== undefined) {
      const level = this.#o.failureLogLevel === 'debug' ? 'debug' : 'info';
      this.#o.logger[level]({ resource: this.#label }, 'list/watch works again');
      this.#failureLog = undefined;
    }
    this.#o.onHealth?.(undefined);
  }

  #setProblem(problem: string | undefined): void {
    if (problem === this.#problem) return;
    this.#problem = problem;
    this.#o.onProblem(problem);
  }

  async #list(): Promise<void> {
    this.#phase = 'list';
    const listing = this.#store.listing();
    let token: string | undefined;
    let resourceVersion = '';
    do {
      const page = await this.#o.client.request('GET', this.#path, {
        query: {
          limit: this.#o.pageSize,
          continue: token,
          fieldSelector: this.#o.resolved.watched.fieldSelector,
        },
      });
      if (!isRecord(page) || !Array.isArray(page.items))
        throw new Error(`unexpected list response from ${this.#path}`);
      for (const item of page.items) listing.add(item);
      const meta = isRecord(page.metadata) ? page.metadata : {};
      token = typeof meta.continue === 'string' && meta.continue ? meta.continue : undefined;
      if (typeof meta.resourceVersion === 'string') resourceVersion = meta.resourceVersion;
    } while (token);
    const changed = listing.commit();
    this.#resourceVersion = resourceVersion;
    this.#o.countEvent('LIST');
    this.#backoff.reset();
    this.#setProblem(undefined);
    this.#recovered();
    this.#o.logger.debug({ resource: this.#label, objects: listing.size, resourceVersion }, 'listed');
    const first = !this.#synced;
    this.#synced = true;
    if (first) this.#o.onSynced();
    if (changed || first) this.#o.onChange();
  }

  #watchOnce(): Promise<WatchEnd> {
    this.#phase = 'watch';
    return watchOnce(
      {
        client: this.#o.client,
        path: this.#path,
        resourceVersion: this.#resourceVersion,
        fieldSelector: this.#o.resolved.watched.fieldSelector,
        watchTimeoutSeconds: this.#o.watchTimeoutSeconds,
        stop: this.#stop.signal,
      },
      this.#handlers,
    );
  }

  #apply(type: string, obj: unknown): void {
    const meta = isRecord(obj) && isRecord(obj.metadata) ? obj.metadata : undefined;
    if (meta && typeof meta.resourceVersion === 'string' && meta.resourceVersion) {
      this.#resourceVersion = meta.resourceVersion;
    }
    const changed = this.#store.apply(type, obj);
    if (changed !== undefined) this.#o.onChange(changed);
  }
}
