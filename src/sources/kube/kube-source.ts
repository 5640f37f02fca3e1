import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { KubeApiClient } from '../../kube/api-client.ts';
import { Backoff, sleep } from '../../kube/backoff.ts';
import { discoverKinds } from '../../kube/discovery.ts';
import { endpointFromKubeConfig } from '../../kube/kubeconfig-endpoint.ts';
import { Reflector } from '../../kube/reflector.ts';
import { kindLabel, type WatchedKind, watchedKinds } from '../../kube/resource-kinds.ts';
import { controllerMetrics } from '../../metrics/controller-metrics.ts';
import {
  CREDENTIAL_REFERRING_KINDS,
  type CredentialReferences,
} from '../../snapshot/credential-references.ts';
import type { AnyResource, EndpointSlice } from '../../snapshot/resources.ts';
import { type SliceChange, Snapshot } from '../../snapshot/snapshot.ts';
import type { Source } from '../../snapshot/source.ts';
import { Debouncer } from './debouncer.ts';
import { type CredentialKind, ReferencedCredentials } from './referenced-credentials.ts';

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
  /** Secrets and ConfigMaps (`namespace/name`) the gateway itself reads, whatever refers to them (`--network-tls-secret`). */
  readonly ownCredentials?: CredentialReferences;
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
/**
 * List page size for Secrets and ConfigMaps: each may hold up to 1 MiB (etcd's limit), so 500 of them would make
 * a response larger than the longest string V8 can hold, and the list would fail for ever.
 */
const CREDENTIAL_PAGE_SIZE = 50;
const isCredentialKind = (kind: string): kind is CredentialKind => kind === 'Secret' || kind === 'ConfigMap';

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
  readonly #credentials: ReferencedCredentials;
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
    this.#credentials = new ReferencedCredentials({
      client: this.#client,
      logger: this.#log,
      referringObjects: () => this.#referringObjects(),
      storeOf: (kind) => this.#reflectorOf(kind),
      onSettled: () => this.#changed(),
      ...(options.ownCredentials ? { ownCredentials: options.ownCredentials } : {}),
    });
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
    const out = [...this.#problems.values(), ...this.#credentials.problems()];
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
    this.#credentials.stop();
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
      const { kind } = resolved.watched;
      this.#missing.delete(label);
      this.#log.info({ resource: label, version: resolved.version }, 'watching');
      const reflector = new Reflector({
        client: this.#client,
        resolved,
        logger: this.#log,
        ...(isCredentialKind(kind) ? { normalize: this.#credentials.normalize } : {}),
        onChange: (key) => {
          if (CREDENTIAL_REFERRING_KINDS.has(kind)) this.#credentials.referencesChanged();
          this.#changed(kind === 'EndpointSlice' ? key : undefined);
        },
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
        pageSize: Math.min(this.#o.pageSize ?? 500, isCredentialKind(kind) ? CREDENTIAL_PAGE_SIZE : Infinity),
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
    if (CREDENTIAL_REFERRING_KINDS.has(watched.kind)) this.#credentials.referencesChanged();
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

  #emit(): void {
    if (!this.#onSnapshot || this.#stop.signal.aborted) return;
    if (!this.#initialEmitted && !this.#initialSyncDone()) return;
    const full = this.#changedAll || !this.#last;
    // A Secret referenced since it was stored is fetched first: translation must not find it without its data.
    // The fetches' end calls #changed() again.
    if (full && !this.#credentials.settle()) return;
    if (!this.#initialEmitted) {
      this.#initialEmitted = true;
      this.#log.info('initial sync complete');
    }
    const snapshot = full || !this.#last ? this.#fullSnapshot() : this.#sliceSnapshot(this.#last);
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

  #reflectorOf(kind: string): Reflector | undefined {
    for (const reflector of this.#reflectors.values())
      if (reflector.resolved.watched.kind === kind) return reflector;
    return undefined;
  }

  *#referringObjects(): Iterable<AnyResource> {
    for (const reflector of this.#reflectors.values()) {
      if (!CREDENTIAL_REFERRING_KINDS.has(reflector.resolved.watched.kind)) continue;
      for (const entry of reflector.objects()) yield entry.object;
    }
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
