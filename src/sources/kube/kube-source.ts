import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { KubeApiClient } from '../../kube/api-client.ts';
import { Backoff, sleep } from '../../kube/backoff.ts';
import { endpointFromKubeConfig } from '../../kube/kubeconfig-endpoint.ts';
import { controllerMetrics } from '../../metrics/controller-metrics.ts';
import type { AnyResource, EndpointSlice } from '../../snapshot/resources.ts';
import { objectKey, type SliceChange, Snapshot } from '../../snapshot/snapshot.ts';
import type { Source } from '../source.ts';
import { Debouncer } from './debouncer.ts';
import { discoverKinds } from './discovery.ts';
import { type Normalize, normalizeObject } from './normalize.ts';
import { Reflector } from './reflector.ts';
import { kindLabel, type WatchedKind, watchedKinds } from './resource-kinds.ts';
import { referencedSecrets } from './secret-references.ts';

export interface KubeSourceOptions {
  readonly kubeConfig: KubeConfig;
  readonly logger: Logger;
  /** Quiet time after a change before a snapshot is built. Default 100 ms. */
  readonly debounceMs?: number;
  /** Upper bound on how long a stream of changes can delay a snapshot. Default 1 s. */
  readonly maxDebounceMs?: number;
  /**
   * Quiet time when only EndpointSlices changed: such a snapshot is made from the last one (no other object is
   * indexed again) and costs no translation, so it need not wait long. Default 5 ms.
   */
  readonly endpointDebounceMs?: number;
  /** Group/kind pairs accepted as ServiceImport backends (GEP-1748); `multicluster.x-k8s.io` is always watched. */
  readonly serviceImportKinds?: readonly { readonly group: string; readonly kind: string }[];
  /** How often discovery is repeated while a watched kind is not served (CRD installed later). Default 30 s. */
  readonly discoveryIntervalMs?: number;
  /** Server-side watch timeout, randomised up to twice this. Default 300 s, as client-go. */
  readonly watchTimeoutSeconds?: number;
  readonly backoffInitialMs?: number;
  readonly backoffMaxMs?: number;
  readonly pageSize?: number;
  readonly registry?: Registry;
}

export interface KubeSource extends Source {
  /** True once every required kind has been listed (the initial snapshot was emitted) and none is denied. */
  readonly ready: boolean;
  /** Lasting problems: RBAC denials naming the permission, required CRDs not installed, malformed objects. */
  readonly problems: readonly string[];
  /** ServiceImport group/kinds the API server currently serves; a route to any other gets InvalidKind. */
  readonly servedServiceImportKinds: readonly { readonly group: string; readonly kind: string }[];
}

const MAX_LISTED_INVALID = 20;

export function createKubeSource(options: KubeSourceOptions): KubeSource {
  return new KubernetesSource(options);
}

class KubernetesSource implements KubeSource {
  readonly name = 'kubernetes';
  readonly #o: KubeSourceOptions;
  readonly #log: Logger;
  readonly #client: KubeApiClient;
  readonly #kinds: readonly WatchedKind[];
  readonly #reflectors = new Map<string, Reflector>();
  readonly #missing = new Map<string, WatchedKind>();
  readonly #problems = new Map<string, string>();
  readonly #stop = new AbortController();
  readonly #debouncer: Debouncer;
  readonly #countEvent: (kind: string, type: string) => void;
  #discoveryProblem: string | undefined;
  #onSnapshot: ((snapshot: Snapshot) => void) | undefined;
  #initialEmitted = false;
  #discovered = false;
  #discoveryLoop: Promise<void> | undefined;
  #wakeDiscovery: AbortController = new AbortController();
  /** The last snapshot emitted, and what changed since: EndpointSlice keys only, or anything (`#changedAll`). */
  #last: Snapshot | undefined;
  #changedAll = true;
  readonly #changedSlices = new Set<string>();
  /** Secrets a Gateway or ListenerSet names: only these keep their data (the rest is metadata and type). */
  #referencedSecrets: ReadonlySet<string> = new Set();
  /** Stored without their data (not referenced when they were last seen). */
  readonly #trimmedSecrets = new Set<string>();
  /** Referenced Secrets whose fetch failed; tried again when they change. */
  readonly #unfetchableSecrets = new Set<string>();
  #fetchingSecrets: Promise<void> | undefined;

  constructor(options: KubeSourceOptions) {
    this.#o = options;
    this.#log = options.logger.child({ component: 'kube-source' });
    this.#client = new KubeApiClient(endpointFromKubeConfig(options.kubeConfig), 30_000, this.#stop.signal);
    this.#kinds = watchedKinds(options.serviceImportKinds ?? []);
    for (const kind of this.#kinds) this.#missing.set(kindLabel(kind), kind);
    this.#debouncer = new Debouncer(
      () => this.#emit(),
      options.debounceMs ?? 100,
      options.maxDebounceMs ?? 1000,
    );
    const metrics = options.registry ? controllerMetrics(options.registry) : undefined;
    this.#countEvent = (kind, type) => metrics?.watchEvents.inc({ kind, type });
  }

  get ready(): boolean {
    if (!this.#initialEmitted) return false;
    for (const kind of this.#kinds) {
      if (!kind.required) continue;
      const reflector = this.#reflectors.get(kindLabel(kind));
      if (!reflector?.synced || reflector.problem) return false;
    }
    return true;
  }

  get problems(): readonly string[] {
    const out = [...this.#problems.values()];
    if (this.#discoveryProblem) out.unshift(this.#discoveryProblem);
    const invalid: string[] = [];
    for (const reflector of this.#reflectors.values()) {
      for (const [key, reason] of reflector.invalidObjects()) {
        invalid.push(`${reflector.resolved.watched.kind} ${key} is malformed and ignored: ${reason}`);
      }
    }
    out.push(...invalid.slice(0, MAX_LISTED_INVALID));
    if (invalid.length > MAX_LISTED_INVALID)
      out.push(`and ${invalid.length - MAX_LISTED_INVALID} more malformed objects`);
    for (const kind of this.#discovered ? this.#missing.values() : []) {
      if (kind.required) {
        out.push(`${kindLabel(kind)} (${kind.kind}) is not served by the API server; install its CRD`);
      }
    }
    return out;
  }

  get servedServiceImportKinds(): readonly { readonly group: string; readonly kind: string }[] {
    const out: { group: string; kind: string }[] = [];
    for (const reflector of this.#reflectors.values()) {
      const { watched } = reflector.resolved;
      if (watched.kind === 'ServiceImport') out.push({ group: watched.group, kind: watched.kind });
    }
    return out;
  }

  async start(onSnapshot: (snapshot: Snapshot) => void): Promise<void> {
    this.#onSnapshot = onSnapshot;
    // Not awaited: an API server that is down at start means retries and readyz false, not a failed start.
    this.#discoveryLoop ??= this.#runDiscovery();
  }

  async stop(): Promise<void> {
    this.#stop.abort();
    this.#wakeDiscovery.abort();
    this.#debouncer.cancel();
    await this.#discoveryLoop;
    await Promise.all([...this.#reflectors.values()].map((r) => r.stop()));
  }

  async #runDiscovery(): Promise<void> {
    const signal = this.#stop.signal;
    const backoff = new Backoff(this.#o.backoffInitialMs ?? 500, this.#o.backoffMaxMs ?? 30_000);
    const interval = this.#o.discoveryIntervalMs ?? 30_000;
    while (!signal.aborted) {
      let delay = interval;
      if (this.#missing.size > 0) {
        try {
          await this.#discoverOnce();
          backoff.reset();
          if (this.#discoveryProblem) this.#log.info('API server reachable again');
          this.#discoveryProblem = undefined;
        } catch (err) {
          delay = Math.min(interval, backoff.next());
          const message = err instanceof Error ? err.message : String(err);
          if (this.#discoveryProblem === undefined)
            this.#log.warn({ err: message }, 'API discovery failed; retrying');
          this.#discoveryProblem = `API discovery failed: ${message}`;
        }
      }
      if (signal.aborted) return;
      this.#wakeDiscovery = new AbortController();
      await sleep(delay, AbortSignal.any([signal, this.#wakeDiscovery.signal]));
    }
  }

  async #discoverOnce(): Promise<void> {
    const result = await discoverKinds(this.#client, [...this.#missing.values()]);
    if (this.#stop.signal.aborted) return;
    this.#discovered = true;
    for (const resolved of result.resolved) {
      const label = kindLabel(resolved.watched);
      this.#missing.delete(label);
      this.#log.info({ resource: label, version: resolved.version }, 'watching');
      const reflector = new Reflector({
        client: this.#client,
        resolved,
        logger: this.#log,
        ...(resolved.watched.kind === 'Secret' ? { normalize: this.#normalizeSecret } : {}),
        onChange: (key) => this.#changed(resolved.watched.kind === 'EndpointSlice' ? key : undefined),
        onSynced: () => this.#changed(),
        onProblem: (problem) => {
          if (problem) this.#problems.set(label, problem);
          else this.#problems.delete(label);
          this.#changed();
        },
        onGone: () => this.#gone(label, resolved.watched),
        countEvent: (type) => this.#countEvent(resolved.watched.kind, type),
        watchTimeoutSeconds: this.#o.watchTimeoutSeconds ?? 300,
        backoffInitialMs: this.#o.backoffInitialMs ?? 500,
        backoffMaxMs: this.#o.backoffMaxMs ?? 30_000,
        pageSize: this.#o.pageSize ?? 500,
      });
      this.#reflectors.set(label, reflector);
      reflector.start();
    }
    for (const kind of result.missing) {
      if (!kind.required)
        this.#log.debug({ resource: kindLabel(kind) }, 'optional resource not served; will check again');
    }
    if (result.missing.some((k) => k.required)) {
      this.#log.warn(
        { missing: result.missing.filter((k) => k.required).map(kindLabel) },
        'required resources are not served',
      );
    }
  }

  #gone(label: string, watched: WatchedKind): void {
    const reflector = this.#reflectors.get(label);
    this.#reflectors.delete(label);
    this.#problems.delete(label);
    this.#missing.set(label, watched);
    void reflector?.stop();
    this.#changed();
    this.#wakeDiscovery.abort();
  }

  /** `sliceKey`: only that EndpointSlice changed; none: anything may have. */
  #changed(sliceKey?: string): void {
    if (this.#stop.signal.aborted) return;
    if (sliceKey !== undefined && !this.#changedAll) {
      this.#changedSlices.add(sliceKey);
      this.#debouncer.trigger(this.#o.endpointDebounceMs ?? 5);
      return;
    }
    this.#changedAll = true;
    this.#changedSlices.clear();
    this.#debouncer.trigger();
  }

  /** The first snapshot waits until every required kind is listed and every optional one listed or failing. */
  #initialSyncDone(): boolean {
    for (const kind of this.#kinds) {
      const label = kindLabel(kind);
      const reflector = this.#reflectors.get(label);
      if (kind.required && !reflector?.synced) return false;
      if (!kind.required && reflector && !reflector.synced && !reflector.problem) return false;
    }
    return true;
  }

  /**
   * Certificate data is kept for the Secrets a Gateway or ListenerSet names, not for the hundreds a cluster may
   * hold (cert-manager's, other controllers'): an unreferenced one is stored as its metadata and type.
   */
  readonly #normalizeSecret: Normalize = (value, apiVersion, kind) => {
    const result = normalizeObject(value, apiVersion, kind);
    if (!result.ok) return result;
    const secret = result.object as AnyResource & { readonly data?: unknown };
    const key = objectKey(secret);
    this.#unfetchableSecrets.delete(key);
    if (secret.data === undefined || this.#referencedSecrets.has(key)) {
      this.#trimmedSecrets.delete(key);
      return result;
    }
    this.#trimmedSecrets.add(key);
    const { data: _data, ...trimmed } = secret;
    const { resourceVersion: _rv, ...stableMeta } = trimmed.metadata;
    return {
      ok: true,
      object: Object.freeze(trimmed) as AnyResource,
      fingerprint: JSON.stringify({ ...trimmed, metadata: stableMeta, dataNotKept: true }),
    };
  };

  /**
   * Brings stored Secrets in line with what Gateways and ListenerSets now name: data of those no longer named
   * is dropped, data of newly named ones is fetched. False while fetches run (the snapshot waits for them).
   */
  #syncSecretData(): boolean {
    const secrets = [...this.#reflectors.values()].find((r) => r.resolved.watched.kind === 'Secret');
    if (!secrets) return true;
    const named: AnyResource[] = [];
    for (const reflector of this.#reflectors.values()) {
      const { kind } = reflector.resolved.watched;
      if (kind === 'Gateway' || kind === 'ListenerSet')
        for (const entry of reflector.objects()) named.push(entry.object);
    }
    const referenced = referencedSecrets(named);
    this.#referencedSecrets = referenced;
    for (const entry of [...secrets.objects()]) {
      const key = objectKey(entry.object);
      if (!referenced.has(key) && !this.#trimmedSecrets.has(key) && 'data' in entry.object)
        secrets.refresh(entry.object);
    }
    const missing = [...referenced].filter(
      (key) =>
        this.#trimmedSecrets.has(key) && !this.#unfetchableSecrets.has(key) && secrets.get(key) !== undefined,
    );
    if (missing.length === 0) return true;
    this.#fetchingSecrets ??= this.#fetchSecrets(secrets, missing).finally(() => {
      this.#fetchingSecrets = undefined;
      this.#changed();
    });
    return false;
  }

  async #fetchSecrets(secrets: Reflector, keys: readonly string[]): Promise<void> {
    const version = secrets.resolved.version;
    const queue = [...keys];
    const worker = async (): Promise<void> => {
      for (let key = queue.shift(); key !== undefined; key = queue.shift()) {
        const [namespace = '', name = ''] = key.split('/');
        try {
          const fetched = await this.#client.request(
            'GET',
            `/api/${version}/namespaces/${encodeURIComponent(namespace)}/secrets/${encodeURIComponent(name)}`,
          );
          const stored = secrets.get(key)?.metadata.resourceVersion;
          const meta = (fetched as { metadata?: { resourceVersion?: string } }).metadata;
          // A newer version than the one stored comes by the watch, data included now that it is named.
          if (stored === undefined || meta?.resourceVersion === stored) secrets.refresh(fetched);
        } catch (err) {
          this.#unfetchableSecrets.add(key);
          this.#log.warn(
            { secret: key, err: err instanceof Error ? err.message : String(err) },
            'a Secret a listener names could not be read',
          );
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(8, keys.length) }, worker));
  }

  #emit(): void {
    if (!this.#onSnapshot || this.#stop.signal.aborted) return;
    if (this.#changedAll && !this.#syncSecretData()) return;
    if (!this.#initialEmitted) {
      if (!this.#initialSyncDone()) return;
      this.#initialEmitted = true;
      this.#log.info('initial sync complete');
    }
    const snapshot = this.#changedAll || !this.#last ? this.#fullSnapshot() : this.#sliceSnapshot(this.#last);
    this.#changedAll = false;
    this.#changedSlices.clear();
    if (snapshot === this.#last) return;
    this.#last = snapshot;
    this.#onSnapshot(snapshot);
  }

  #fullSnapshot(): Snapshot {
    const objects: AnyResource[] = [];
    for (const reflector of this.#reflectors.values()) {
      for (const entry of reflector.objects()) objects.push(entry.object);
    }
    return new Snapshot(objects);
  }

  /** `last` with the changed EndpointSlices, or `last` itself when they are back as they were. */
  #sliceSnapshot(last: Snapshot): Snapshot {
    const reflector = [...this.#reflectors.values()].find((r) => r.resolved.watched.kind === 'EndpointSlice');
    const before = last.byKey('EndpointSlice');
    const changes: SliceChange[] = [];
    for (const key of this.#changedSlices) {
      const now = reflector?.get(key) as EndpointSlice | undefined;
      const then = before.get(key);
      if (now !== then) changes.push({ before: then, after: now });
    }
    return changes.length === 0 ? last : Snapshot.withEndpointSlices(last, changes);
  }
}
