import { Watch } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { groupVersionPath, type KubeApiClient, KubeApiError } from '../../kube/api-client.ts';
import { Backoff, sleep } from '../../kube/backoff.ts';
import type { AnyResource } from '../../snapshot/resources.ts';
import { objectKey } from '../../snapshot/snapshot.ts';
import { isRecord } from '../decode.ts';
import type { ResolvedKind } from './discovery.ts';
import { normalizeObject } from './normalize.ts';
import { kindLabel } from './resource-kinds.ts';

export interface ReflectorOptions {
  readonly client: KubeApiClient;
  readonly resolved: ResolvedKind;
  readonly logger: Logger;
  /** The set of objects changed in a way that may change the output. */
  readonly onChange: () => void;
  /** The first list succeeded. */
  readonly onSynced: () => void;
  /** A lasting problem (RBAC denial), or `undefined` once it is gone. */
  readonly onProblem: (problem: string | undefined) => void;
  /** The server no longer serves the resource (its CRD was removed). */
  readonly onGone: () => void;
  readonly countEvent: (type: string) => void;
  readonly watchTimeoutSeconds: number;
  readonly backoffInitialMs: number;
  readonly backoffMaxMs: number;
  readonly pageSize: number;
}

interface Entry {
  readonly object: AnyResource;
  readonly fingerprint: string;
  readonly uid: string | undefined;
}

type WatchEnd =
  | { readonly kind: 'closed'; readonly events: number; readonly durationMs: number }
  | { readonly kind: 'expired' }
  | { readonly kind: 'error'; readonly error: unknown };

/**
 * List, then watch from the list's resourceVersion, for one resource; like client-go's Reflector.
 * - A watch that ends cleanly (server timeout, dropped connection) resumes from the last resourceVersion seen,
 *   including bookmarks, so nothing is missed and nothing is replayed.
 * - 410 Gone (history compacted) relists; the list replaces the store, so deletions missed meanwhile show up.
 * - Errors back off exponentially with jitter; 403 is reported as a problem naming the missing permission.
 * - Objects failing envelope validation are logged and left out; they never stop the loop.
 */
export class Reflector {
  readonly #o: ReflectorOptions;
  readonly #watch: Watch;
  readonly #store = new Map<string, Entry>();
  readonly #stop = new AbortController();
  readonly #backoff: Backoff;
  readonly #apiVersion: string;
  readonly #path: string;
  readonly #label: string;
  readonly #invalidLogged = new Set<string>();
  /** Objects currently skipped as malformed: key → reason. */
  readonly #invalid = new Map<string, string>();
  #resourceVersion = '';
  #phase: 'list' | 'watch' = 'list';
  #synced = false;
  #problem: string | undefined;
  #current: AbortController | undefined;
  #loop: Promise<void> | undefined;

  constructor(options: ReflectorOptions) {
    this.#o = options;
    this.#watch = new Watch(options.client.kubeConfig);
    this.#backoff = new Backoff(options.backoffInitialMs, options.backoffMaxMs);
    const { watched, version } = options.resolved;
    this.#apiVersion = watched.group ? `${watched.group}/${version}` : version;
    this.#path = `${groupVersionPath(watched.group, version)}/${watched.plural}`;
    this.#label = kindLabel(watched);
  }

  get synced(): boolean {
    return this.#synced;
  }

  get problem(): string | undefined {
    return this.#problem;
  }

  get resolved(): ResolvedKind {
    return this.#o.resolved;
  }

  /** Malformed objects currently left out, for problems in /config_dump. */
  invalidObjects(): ReadonlyMap<string, string> {
    return this.#invalid;
  }

  objects(): IterableIterator<Entry> {
    return this.#store.values();
  }

  start(): void {
    this.#loop ??= this.#run();
  }

  async stop(): Promise<void> {
    this.#stop.abort();
    this.#current?.abort();
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
    this.#o.logger.warn(
      { resource: this.#label, err: err instanceof Error ? err.message : String(err) },
      'list/watch failed; retrying',
    );
  }

  #setProblem(problem: string | undefined): void {
    if (problem === this.#problem) return;
    this.#problem = problem;
    this.#o.onProblem(problem);
  }

  async #list(): Promise<void> {
    this.#phase = 'list';
    const next = new Map<string, Entry>();
    const invalid = new Map<string, string>();
    let token: string | undefined;
    let resourceVersion = '';
    do {
      const page = await this.#o.client.request('GET', this.#path, {
        query: { limit: this.#o.pageSize, continue: token },
      });
      if (!isRecord(page) || !Array.isArray(page.items))
        throw new Error(`unexpected list response from ${this.#path}`);
      for (const item of page.items) {
        const entry = this.#entry(item, invalid);
        if (entry) next.set(objectKey(entry.object), entry);
      }
      const meta = isRecord(page.metadata) ? page.metadata : {};
      token = typeof meta.continue === 'string' && meta.continue ? meta.continue : undefined;
      if (typeof meta.resourceVersion === 'string') resourceVersion = meta.resourceVersion;
    } while (token);
    let changed = next.size !== this.#store.size;
    for (const [key, entry] of next) {
      if (this.#store.get(key)?.fingerprint !== entry.fingerprint) changed = true;
    }
    this.#store.clear();
    for (const [key, entry] of next) this.#store.set(key, entry);
    this.#invalid.clear();
    for (const [key, reason] of invalid) this.#invalid.set(key, reason);
    this.#resourceVersion = resourceVersion;
    this.#o.countEvent('LIST');
    this.#backoff.reset();
    this.#setProblem(undefined);
    this.#o.logger.debug({ resource: this.#label, objects: next.size, resourceVersion }, 'listed');
    const first = !this.#synced;
    this.#synced = true;
    if (first) this.#o.onSynced();
    if (changed || first) this.#o.onChange();
  }

  #entry(item: unknown, invalid: Map<string, string>): Entry | undefined {
    const result = normalizeObject(item, this.#apiVersion, this.#o.resolved.watched.kind);
    const meta = isRecord(item) && isRecord(item.metadata) ? item.metadata : {};
    const key = meta.namespace ? `${String(meta.namespace)}/${String(meta.name)}` : String(meta.name ?? '?');
    if (result.ok) invalid.delete(key);
    else {
      invalid.set(key, result.reason);
      const id = `${String(meta.namespace ?? '')}/${String(meta.name ?? '?')}@${String(meta.resourceVersion ?? '')}`;
      if (!this.#invalidLogged.has(id)) {
        this.#invalidLogged.add(id);
        if (this.#invalidLogged.size > 10_000) this.#invalidLogged.clear();
        this.#o.logger.warn(
          { resource: this.#label, namespace: meta.namespace, name: meta.name, reason: result.reason },
          'skipping malformed object',
        );
      }
      return undefined;
    }
    return { object: result.object, fingerprint: result.fingerprint, uid: result.object.metadata.uid };
  }

  #watchOnce(): Promise<WatchEnd> {
    const signal = this.#stop.signal;
    this.#phase = 'watch';
    const startedAt = performance.now();
    return new Promise<WatchEnd>((resolve) => {
      let events = 0;
      let expired = false;
      let settled = false;
      const controller = new AbortController();
      this.#current = controller;
      // Randomised like client-go's minWatchTimeout, so replicas do not reconnect in lockstep.
      const timeoutSeconds = Math.round(this.#o.watchTimeoutSeconds * (1 + Math.random()));
      let watchdog: NodeJS.Timeout | undefined;
      const arm = (): void => {
        clearTimeout(watchdog);
        // No byte for longer than the server-side timeout plus slack means a half-open connection.
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
        this.#o.countEvent(type);
        if (type === 'ERROR') {
          const code = isRecord(obj) ? obj.code : undefined;
          if (code === 410) expired = true;
          else this.#o.logger.warn({ resource: this.#label, status: obj }, 'watch error event');
          return;
        }
        events++;
        this.#backoff.reset();
        this.#apply(type, obj);
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
                this.#path,
                status,
                undefined,
                err instanceof Error ? err.message : 'watch failed',
              ),
            });
          } else finish({ kind: 'error', error: err });
        } else finish(closed());
      };
      arm();
      this.#watch
        .watch(
          this.#path,
          { resourceVersion: this.#resourceVersion, allowWatchBookmarks: true, timeoutSeconds },
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

  #apply(type: string, obj: unknown): void {
    const meta = isRecord(obj) && isRecord(obj.metadata) ? obj.metadata : undefined;
    if (meta && typeof meta.resourceVersion === 'string' && meta.resourceVersion) {
      this.#resourceVersion = meta.resourceVersion;
    }
    if (type === 'BOOKMARK' || !meta || typeof meta.name !== 'string') return;
    const key =
      typeof meta.namespace === 'string' && meta.namespace ? `${meta.namespace}/${meta.name}` : meta.name;
    const existing = this.#store.get(key);
    if (type === 'DELETED') {
      if (this.#invalid.delete(key)) this.#o.onChange();
      // A delete of an older incarnation (different uid) must not remove the object that replaced it.
      if (!existing || (existing.uid && meta.uid && existing.uid !== meta.uid)) return;
      this.#store.delete(key);
      this.#o.onChange();
      return;
    }
    if (type !== 'ADDED' && type !== 'MODIFIED') return;
    const entry = this.#entry(obj, this.#invalid);
    if (!entry) {
      // Left out of the snapshot (and listed as a problem) until it is fixed or deleted.
      this.#store.delete(key);
      this.#o.onChange();
      return;
    }
    this.#store.set(key, entry);
    if (existing?.fingerprint !== entry.fingerprint) this.#o.onChange();
  }
}
