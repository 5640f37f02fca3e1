import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { type StatusKind, type StatusUpdate, statusKey } from '../ir/status.ts';
import { controllerMetrics } from '../metrics/controller-metrics.ts';
import { isRecord, sameJsonValue } from '../snapshot/json-object.ts';
import { KubeApiClient, KubeApiError, resourcePath } from './api-client.ts';
import { EventRecorder } from './event-recorder.ts';
import { endpointFromKubeConfig } from './kubeconfig-endpoint.ts';
import { desiredStatus, formatTime, problemTransitions } from './merge-status.ts';
import { StatusQueue } from './status-queue.ts';

export interface StatusWriterOptions {
  readonly kubeConfig: KubeConfig;
  readonly controllerName: string;
  readonly logger: Logger;
  /** Checked right before every write: a replica that lost its lease stops writing at once. */
  readonly isLeader: () => boolean;
  readonly registry?: Registry;
  readonly now?: () => Date;
  /** Attempts per object when the server answers 409 Conflict. Default 5. */
  readonly maxConflictRetries?: number;
  /** How long a status known to be on the server is trusted without reading it back. Default 5 min. */
  readonly resyncMs?: number;
  /** First delay before an object whose status failed to write is tried again, doubling per failure. Default 1 s. */
  readonly retryMs?: number;
  /** Longest of those delays. Default 60 s. */
  readonly retryMaxMs?: number;
  /** Objects written at once. Default 4. */
  readonly concurrency?: number;
  /** Status writes started per second, sustained, and at once after a quiet spell. Defaults 20 and 50. */
  readonly qps?: number;
  readonly burst?: number;
  /** Record Warning Events when a condition turns bad. Default true. */
  readonly events?: boolean;
  /** reportingInstance of those Events (the pod name). */
  readonly instance?: string;
}

export interface StatusWriter {
  /**
   * Queues what changed, one entry per object (a newer status replaces a queued one); writes run from that queue,
   * retried with backoff and rate-limited. The promise resolves once the queue has nothing ready or in flight:
   * callers on the routing path must not wait for it.
   */
  write(statuses: readonly StatusUpdate[]): Promise<void>;
  /** Forget what is known to be written (e.g. after regaining leadership, another replica may have written). */
  resync(): void;
  /** Resync and write the last statuses again: call it from onStartedLeading, as nothing may change for a while. */
  rewrite(): Promise<void>;
  stop(): void;
}

const GATEWAY_GROUP = 'gateway.networking.k8s.io';
const PLURALS: Record<StatusKind, string> = {
  GatewayClass: 'gatewayclasses',
  Gateway: 'gateways',
  HTTPRoute: 'httproutes',
  GRPCRoute: 'grpcroutes',
  ListenerSet: 'listenersets',
  TLSRoute: 'tlsroutes',
  TCPRoute: 'tcproutes',
  UDPRoute: 'udproutes',
  BackendTLSPolicy: 'backendtlspolicies',
  XBackendTrafficPolicy: 'xbackendtrafficpolicies',
  ClusterSelectionPolicy: 'clusterselectionpolicies',
};
/** Kinds outside Gateway API v1: the project's own policy, and the experimental x-k8s.io one. */
const GROUP_VERSIONS: Partial<Record<StatusKind, readonly [group: string, version: string]>> = {
  ClusterSelectionPolicy: ['policy.clusterset-gateway.io', 'v1alpha1'],
  XBackendTrafficPolicy: ['gateway.networking.x-k8s.io', 'v1alpha1'],
};
const groupOf = (kind: StatusKind) => GROUP_VERSIONS[kind]?.[0] ?? GATEWAY_GROUP;
const versionOf = (kind: StatusKind) => GROUP_VERSIONS[kind]?.[1] ?? 'v1';

type Result = 'written' | 'unchanged' | 'skipped' | 'gone' | 'error';

/**
 * Kinds whose status holds one entry per controller (`parents`, `ancestors`, each with `controllerName`). Gateway
 * API: "implementations MUST remove their own entries" once the object no longer names their parents; the
 * writer keeps a list of these objects that carry an entry of ours and prunes the ones translation stops naming.
 */
type SharedStatusKind =
  | 'HTTPRoute'
  | 'GRPCRoute'
  | 'TLSRoute'
  | 'TCPRoute'
  | 'UDPRoute'
  | 'BackendTLSPolicy'
  | 'XBackendTrafficPolicy';
const SHARED_STATUS_KINDS: readonly SharedStatusKind[] = [
  'HTTPRoute',
  'GRPCRoute',
  'TLSRoute',
  'TCPRoute',
  'UDPRoute',
  'BackendTLSPolicy',
  'XBackendTrafficPolicy',
];
const isSharedStatusKind = (kind: StatusKind): kind is SharedStatusKind =>
  (SHARED_STATUS_KINDS as readonly StatusKind[]).includes(kind);
const hasAncestors = (kind: StatusKind) => kind === 'BackendTLSPolicy' || kind === 'XBackendTrafficPolicy';
const entriesField = (kind: SharedStatusKind) => (hasAncestors(kind) ? 'ancestors' : 'parents');

/** The update that leaves none of our entries on an object (other controllers' entries are kept by the merge). */
function withoutOurEntries(ref: ObjectRef): StatusUpdate {
  const base = { kind: ref.kind, name: ref.name, generation: 0 };
  const withNamespace = ref.namespace !== undefined ? { ...base, namespace: ref.namespace } : base;
  return hasAncestors(ref.kind)
    ? { ...withNamespace, status: { ancestors: [] } }
    : { ...withNamespace, status: { parents: [] } };
}

interface ObjectRef {
  readonly kind: SharedStatusKind;
  readonly namespace?: string;
  readonly name: string;
}

function hasOurEntries(update: StatusUpdate): boolean {
  const status = update.status as {
    readonly parents?: readonly unknown[];
    readonly ancestors?: readonly unknown[];
  };
  return (status.parents?.length ?? 0) + (status.ancestors?.length ?? 0) > 0;
}

export function createStatusWriter(options: StatusWriterOptions): StatusWriter {
  return new KubeStatusWriter(options);
}

/**
 * Writes translation results to the status subresource (Contour's approach: read the object, merge, write
 * only when different, retry on conflict, count no-ops). The write is a JSON merge patch carrying
 * `metadata.resourceVersion`, which the API server treats as a precondition: a concurrent change gives 409 and
 * the object is read again, so other controllers' HTTPRoute parents entries are never overwritten.
 */
class KubeStatusWriter implements StatusWriter {
  readonly #o: StatusWriterOptions;
  readonly #log: Logger;
  readonly #client: KubeApiClient;
  readonly #now: () => Date;
  readonly #count: (kind: StatusKind, result: string) => void;
  readonly #events: EventRecorder | undefined;
  /** statusKey → fingerprint of the update last confirmed on the server, with when. */
  readonly #confirmed = new Map<string, { readonly fingerprint: string; readonly at: number }>();
  readonly #queue: StatusQueue<StatusUpdate>;
  #batching: Promise<void> | undefined;
  #nextBatch: readonly StatusUpdate[] | undefined;
  #last: readonly StatusUpdate[] = [];
  #retryTimer: NodeJS.Timeout | undefined;
  #wasLeader = false;
  #stopped = false;
  /** Objects of SHARED_STATUS_KINDS known to carry an entry of ours on the server, by statusKey. */
  readonly #ours = new Map<string, ObjectRef>();
  /** Whether #ours must be rebuilt from a list of the server's objects (at start, after leadership moved). */
  #scanNeeded = true;

  constructor(options: StatusWriterOptions) {
    this.#o = options;
    this.#log = options.logger.child({ component: 'status-writer' });
    this.#client = new KubeApiClient(endpointFromKubeConfig(options.kubeConfig));
    this.#now = options.now ?? (() => new Date());
    const metrics = options.registry ? controllerMetrics(options.registry) : undefined;
    this.#count = (kind, result) => metrics?.statusWrites.inc({ kind, result });
    this.#queue = new StatusQueue<StatusUpdate>({
      process: async (update) => ((await this.#writeOne(update)) === 'error' ? 'retry' : 'done'),
      ...(options.concurrency !== undefined ? { concurrency: options.concurrency } : {}),
      ...(options.qps !== undefined ? { qps: options.qps } : {}),
      ...(options.burst !== undefined ? { burst: options.burst } : {}),
      ...(options.retryMs !== undefined ? { retryMs: options.retryMs } : {}),
      ...(options.retryMaxMs !== undefined ? { retryMaxMs: options.retryMaxMs } : {}),
    });
    this.#events =
      options.events === false
        ? undefined
        : new EventRecorder(
            this.#client,
            options.controllerName,
            options.instance ?? 'clusterset-gateway',
            this.#log,
          );
  }

  write(statuses: readonly StatusUpdate[]): Promise<void> {
    this.#last = statuses;
    this.#nextBatch = statuses;
    this.#batching ??= this.#drainBatches().finally(() => {
      this.#batching = undefined;
    });
    return this.#batching.then(() => this.#queue.idle());
  }

  resync(): void {
    this.#confirmed.clear();
    this.#scanNeeded = true;
  }

  rewrite(): Promise<void> {
    this.resync();
    return this.write(this.#last);
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#retryTimer);
    this.#queue.stop();
  }

  /** Batches only decide what to queue; a newer batch arriving meanwhile replaces the older one. */
  async #drainBatches(): Promise<void> {
    for (let batch = this.#nextBatch; batch; batch = this.#nextBatch) {
      this.#nextBatch = undefined;
      await this.#enqueue(batch);
    }
  }

  async #enqueue(statuses: readonly StatusUpdate[]): Promise<void> {
    if (this.#stopped) return;
    const leader = this.#o.isLeader();
    if (leader && !this.#wasLeader) this.resync();
    this.#wasLeader = leader;
    if (!leader) {
      this.#queue.retain(() => false);
      return;
    }
    clearTimeout(this.#retryTimer);
    if (this.#scanNeeded && !(await this.#scanOurEntries()) && !this.#stopped) {
      this.#retryTimer = setTimeout(() => void this.write(this.#last), this.#o.retryMs ?? 1000);
      this.#retryTimer.unref();
    }
    const wanted = new Map<string, StatusUpdate>();
    for (const update of statuses) wanted.set(statusKey(update), update);
    for (const [key, ref] of this.#ours) if (!wanted.has(key)) wanted.set(key, withoutOurEntries(ref));
    this.#queue.retain((key) => wanted.has(key));
    for (const [key, update] of wanted) {
      if (this.#isConfirmed(key, update)) {
        this.#count(update.kind, 'unchanged');
        continue;
      }
      this.#queue.add(key, update);
    }
  }

  #isConfirmed(key: string, update: StatusUpdate): boolean {
    const confirmed = this.#confirmed.get(key);
    return (
      confirmed?.fingerprint === JSON.stringify(update) &&
      Date.now() - confirmed.at < (this.#o.resyncMs ?? 300_000)
    );
  }

  /**
   * Lists every object that can carry our entries and remembers those that do: a route detached while this
   * replica was not writing (restart, another leader) still loses its stale entry. False when a list failed.
   */
  async #scanOurEntries(): Promise<boolean> {
    let complete = true;
    for (const kind of SHARED_STATUS_KINDS) {
      try {
        const list = await this.#client.request(
          'GET',
          resourcePath(groupOf(kind), versionOf(kind), PLURALS[kind]),
        );
        const items = isRecord(list) && Array.isArray(list.items) ? list.items : [];
        for (const item of items) {
          if (!isRecord(item) || !isRecord(item.metadata) || !isRecord(item.status)) continue;
          const entries = item.status[entriesField(kind)];
          const ours =
            Array.isArray(entries) &&
            entries.some((e) => isRecord(e) && e.controllerName === this.#o.controllerName);
          const { name, namespace } = item.metadata;
          if (!ours || typeof name !== 'string') continue;
          const ref: ObjectRef = typeof namespace === 'string' ? { kind, namespace, name } : { kind, name };
          this.#ours.set(statusKey(ref), ref);
        }
      } catch (err) {
        // A kind this cluster does not serve has nothing of ours to prune.
        if (err instanceof KubeApiError && err.statusCode === 404) continue;
        complete = false;
        this.#log.warn(
          { kind, err: err instanceof Error ? err.message : String(err) },
          'listing objects to prune stale status entries failed; will retry',
        );
      }
    }
    if (complete) this.#scanNeeded = false;
    return complete;
  }

  async #writeOne(update: StatusUpdate): Promise<Result> {
    const result = await this.#writeMerged(update);
    if (isSharedStatusKind(update.kind) && result !== 'error') {
      const key = statusKey(update);
      const ref = {
        kind: update.kind,
        name: update.name,
        ...(update.namespace ? { namespace: update.namespace } : {}),
      };
      if (result === 'written' && !hasOurEntries(update))
        this.#log.info({ object: key }, 'status entries of this controller removed');
      if (result === 'gone' || ((result === 'written' || result === 'unchanged') && !hasOurEntries(update)))
        this.#ours.delete(key);
      else if (result !== 'skipped') this.#ours.set(key, ref);
    }
    return result;
  }

  async #writeMerged(update: StatusUpdate): Promise<Result> {
    const key = statusKey(update);
    const fingerprint = JSON.stringify(update);
    const confirmed = this.#confirmed.get(key);
    if (confirmed?.fingerprint === fingerprint && Date.now() - confirmed.at < (this.#o.resyncMs ?? 300_000)) {
      this.#count(update.kind, 'unchanged');
      return 'unchanged';
    }
    const path = resourcePath(
      groupOf(update.kind),
      versionOf(update.kind),
      PLURALS[update.kind],
      update.namespace,
      update.name,
    );
    const attempts = this.#o.maxConflictRetries ?? 5;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      try {
        const current = await this.#client.request('GET', path);
        const meta = isRecord(current) && isRecord(current.metadata) ? current.metadata : {};
        const currentStatus = isRecord(current) ? current.status : undefined;
        const next = desiredStatus(update, currentStatus, this.#o.controllerName, formatTime(this.#now()));
        if (sameJsonValue(next, currentStatus)) {
          this.#confirmed.set(key, { fingerprint, at: Date.now() });
          this.#count(update.kind, 'unchanged');
          return 'unchanged';
        }
        if (!this.#o.isLeader()) return 'skipped';
        await this.#client.request('PATCH', `${path}/status`, {
          body: { metadata: { resourceVersion: meta.resourceVersion }, status: next },
          contentType: 'application/merge-patch+json',
        });
        this.#confirmed.set(key, { fingerprint, at: Date.now() });
        this.#count(update.kind, 'written');
        this.#log.debug({ object: key }, 'status written');
        if (this.#events) {
          const involved = {
            kind: update.kind,
            name: update.name,
            ...(update.namespace ? { namespace: update.namespace } : {}),
            ...(typeof meta.uid === 'string' ? { uid: meta.uid } : {}),
          };
          for (const t of problemTransitions(next, currentStatus, this.#o.controllerName)) {
            await this.#events.warn(involved, t.reason, t.message);
          }
        }
        return 'written';
      } catch (err) {
        if (err instanceof KubeApiError && err.statusCode === 409) {
          this.#count(update.kind, 'conflict');
          continue;
        }
        this.#confirmed.delete(key);
        if (err instanceof KubeApiError && err.statusCode === 404) {
          this.#log.debug({ object: key }, 'object gone before its status was written');
          return 'gone';
        }
        this.#count(update.kind, 'error');
        const message = err instanceof Error ? err.message : String(err);
        if (err instanceof KubeApiError && err.statusCode === 403) {
          this.#log.error(
            { object: key, err: message },
            `RBAC: forbidden to patch ${PLURALS[update.kind]}/status in API group "${groupOf(update.kind)}"`,
          );
        } else {
          this.#log.warn({ object: key, err: message }, 'status write failed');
        }
        return 'error';
      }
    }
    this.#count(update.kind, 'error');
    this.#log.warn({ object: key, attempts }, 'status write kept conflicting; will retry');
    return 'error';
  }
}
