import type { Logger } from 'pino';
import { KubeApiClient, KubeApiError, resourcePath } from '../kube/api-client.ts';
import type { ApiCredentials, ApiEndpoint } from '../kube/api-endpoint.ts';
import { Backoff, sleep } from '../kube/backoff.ts';
import { discoverKinds, type ResolvedKind } from '../kube/discovery.ts';
import { type ExecConfig, type ExecCredential, ExecCredentialSource } from '../kube/exec-credential.ts';
import { normalizeObject } from '../kube/normalize.ts';
import { Reflector } from '../kube/reflector.ts';
import { kindLabel, type WatchedKind } from '../kube/resource-kinds.ts';
import { CLUSTER_ID_PROPERTY } from '../mcs/cluster-identity.ts';
import type { ClusterProperty, Condition, EndpointSlice, Service } from '../snapshot/resources.ts';
import { describeFailure, isRefusal } from './member-failure.ts';
import { MEMBER_KINDS, type MemberKind, normalizeServiceExport } from './member-kinds.ts';
import type { MemberState, ServiceExport } from './member-view.ts';
import { execClusterInfo, type MemberCluster } from './profile-members.ts';

/**
 * How the gateway authenticates to a member: an exec plugin (a ClusterProfile's provider), or a kubeconfig's
 * current user (token, certificate: `endpoint`), whose `exec`, if any, was taken out to `exec` and is run by the
 * gateway.
 */
export type MemberAuth =
  | { readonly kind: 'exec'; readonly exec: ExecConfig }
  | { readonly kind: 'kubeconfig'; readonly endpoint: ApiEndpoint; readonly exec?: ExecConfig };

export interface MemberTiming {
  /** An exec plugin run taking longer is killed. */
  readonly execTimeoutMs: number;
  readonly watchTimeoutSeconds: number;
  readonly backoffInitialMs: number;
  readonly backoffMaxMs: number;
  /** How often discovery is repeated while the member serves no ServiceExport CRD. */
  readonly discoveryIntervalMs: number;
  readonly pageSize: number;
}

export const DEFAULT_MEMBER_TIMING: MemberTiming = {
  execTimeoutMs: 30_000,
  watchTimeoutSeconds: 300,
  backoffInitialMs: 500,
  backoffMaxMs: 30_000,
  discoveryIntervalMs: 30_000,
  pageSize: 500,
};

export interface MemberConnectionOptions {
  /** For logs: the profile's `namespace/name` or the kubeconfig file. */
  readonly label: string;
  readonly cluster: MemberCluster;
  readonly auth: MemberAuth;
  readonly logger: Logger;
  /** Anything in `current()` changed. */
  readonly onChange: () => void;
  /** A request to the member failed (each failure, not only state changes). */
  readonly onError?: () => void;
  readonly timing: MemberTiming;
  readonly now?: () => number;
}

/** What a member connection holds at one moment. */
export interface MemberConnectionState {
  readonly state: MemberState;
  readonly reason?: string;
  readonly lastSyncTime?: string;
  /** The member's `cluster.clusterset.k8s.io` ClusterProperty, when it serves one. */
  readonly clusterName?: string;
  readonly serviceExports: readonly ServiceExport[];
  readonly services: readonly Service[];
  readonly endpointSlices: readonly EndpointSlice[];
  readonly clusterProperties: readonly ClusterProperty[];
}

const MAX_REASON_LENGTH = 300;

/**
 * The gateway's connection to one member cluster: discovery, then one Reflector per kind (the kube source's), all
 * namespaces. Failures (unreachable, wrong CA, refused credentials, a failing plugin, garbage) keep the last good
 * objects and mark the member stale; the reflectors retry with backoff. A 401 makes the exec plugin run again.
 */
export class MemberConnection {
  readonly #o: MemberConnectionOptions;
  readonly #log: Logger;
  readonly #client: KubeApiClient;
  readonly #credentials: ExecCredentialSource | undefined;
  /** The exec credential the latest request went out with: a 401 invalidates exactly that one. */
  #lastCredential: ExecCredential | undefined;
  readonly #reflectors = new Map<MemberKind, Reflector>();
  readonly #missing = new Map<MemberKind, WatchedKind<MemberKind>>();
  /** Current failures by where they happened (`discovery` or a kind). */
  readonly #failures = new Map<string, string>();
  /** Where the current failure is the API server refusing the credentials (401, 403). */
  readonly #refusals = new Set<string>();
  readonly #stop = new AbortController();
  #wakeDiscovery = new AbortController();
  #discovered = false;
  #everSynced = false;
  #lastSyncTime: string | undefined;
  #loop: Promise<void> | undefined;
  #cached: MemberConnectionState | undefined;
  /** The ServiceExport version the member serves, once discovered. */
  #exportVersion: string | undefined;

  constructor(options: MemberConnectionOptions) {
    this.#o = options;
    this.#log = options.logger;
    for (const kind of MEMBER_KINDS) this.#missing.set(kind.kind, kind);
    const { cluster, auth } = options;
    if (auth.exec) {
      this.#credentials = new ExecCredentialSource({
        config: auth.exec,
        cluster: execClusterInfo(cluster),
        timeoutMs: options.timing.execTimeoutMs,
        ...(options.now ? { now: options.now } : {}),
      });
    }
    const base = auth.kind === 'kubeconfig' ? auth.endpoint : undefined;
    const clusterTls: ApiCredentials = {
      ...(cluster.caData ? { ca: Buffer.from(cluster.caData, 'base64') } : {}),
      ...(cluster.insecureSkipTlsVerify ? { insecureSkipTlsVerify: true } : {}),
      ...(cluster.tlsServerName ? { tlsServerName: cluster.tlsServerName } : {}),
    };
    const endpoint: ApiEndpoint = {
      server: cluster.server,
      ...(cluster.proxyUrl ? { proxyUrl: cluster.proxyUrl } : {}),
      credentials: async () => {
        const fromKubeconfig = base ? await base.credentials() : clusterTls;
        const source = this.#credentials;
        if (source === undefined) return fromKubeconfig;
        const credential = await source.get();
        this.#lastCredential = credential;
        return {
          ...fromKubeconfig,
          ...(credential.token
            ? { headers: { ...fromKubeconfig.headers, authorization: `Bearer ${credential.token}` } }
            : {}),
          ...(credential.clientCertificateData
            ? { cert: credential.clientCertificateData, key: credential.clientKeyData ?? '' }
            : {}),
        };
      },
    };
    this.#client = new KubeApiClient(endpoint, 30_000, this.#stop.signal);
  }

  /** Successful exec plugin runs so far. */
  get credentialRuns(): number {
    return this.#credentials?.runs ?? 0;
  }

  start(): void {
    this.#loop ??= this.#runDiscovery();
  }

  /** Replaces a ServiceExport's `status.conditions` (merge patch of the status subresource). */
  async patchExportStatus(namespace: string, name: string, conditions: readonly Condition[]): Promise<void> {
    const version = this.#exportVersion;
    if (version === undefined) throw new Error('the member serves no ServiceExport CRD');
    try {
      await this.#client.request(
        'PATCH',
        resourcePath('multicluster.x-k8s.io', version, 'serviceexports', namespace, name, 'status'),
        { body: { status: { conditions } }, contentType: 'application/merge-patch+json' },
      );
    } catch (err) {
      throw new Error(describeFailure(err));
    }
  }

  async stop(): Promise<void> {
    this.#stop.abort();
    this.#wakeDiscovery.abort();
    await this.#loop;
    await Promise.all([...this.#reflectors.values()].map((r) => r.stop()));
  }

  current(): MemberConnectionState {
    this.#cached ??= this.#build();
    return this.#cached;
  }

  #changed(): void {
    if (this.#stop.signal.aborted) return;
    this.#cached = undefined;
    this.#o.onChange();
  }

  #build(): MemberConnectionState {
    const objects = <T>(kind: MemberKind): T[] => {
      const reflector = this.#reflectors.get(kind);
      return reflector ? [...reflector.objects()].map((e) => e.object as unknown as T) : [];
    };
    const clusterProperties = objects<ClusterProperty>('ClusterProperty');
    const clusterName = clusterProperties.find((p) => p.metadata.name === CLUSTER_ID_PROPERTY)?.spec?.value;
    const failures = [...new Set(this.#failures.values())];
    const notes: string[] = [];
    if (this.#discovered && this.#missing.has('ServiceExport')) {
      notes.push(
        'serves no ServiceExport CRD (multicluster.x-k8s.io v1beta1 or v1alpha1): nothing is exported',
      );
    }
    let state: MemberConnectionState['state'];
    if (this.#everSynced) state = failures.length > 0 ? 'stale' : 'synced';
    else if (failures.length === 0) state = 'connecting';
    else state = this.#refusals.size > 0 ? 'refused' : 'error';
    const reason = [...failures, ...notes].join('; ').slice(0, MAX_REASON_LENGTH);
    return {
      state,
      ...(reason ? { reason } : state === 'connecting' ? { reason: 'waiting for the first list' } : {}),
      ...(this.#lastSyncTime ? { lastSyncTime: this.#lastSyncTime } : {}),
      ...(clusterName ? { clusterName } : {}),
      serviceExports: objects<ServiceExport>('ServiceExport'),
      services: objects<Service>('Service'),
      endpointSlices: objects<EndpointSlice>('EndpointSlice'),
      clusterProperties,
    };
  }

  #fail(where: string, err: unknown): void {
    this.#o.onError?.();
    if (err instanceof KubeApiError && err.statusCode === 401) {
      this.#credentials?.invalidate(this.#lastCredential);
    }
    const reason = describeFailure(err);
    const refused = isRefusal(err);
    if (this.#failures.get(where) === reason && this.#refusals.has(where) === refused) return;
    this.#failures.set(where, reason);
    if (refused) this.#refusals.add(where);
    else this.#refusals.delete(where);
    this.#changed();
  }

  #recover(where: string): void {
    this.#refusals.delete(where);
    if (!this.#failures.delete(where)) return;
    this.#checkSynced();
    this.#changed();
  }

  /** Every watched kind listed and nothing failing: a complete sync. */
  #checkSynced(): void {
    if (!this.#discovered || this.#failures.size > 0) return;
    for (const kind of MEMBER_KINDS) {
      const reflector = this.#reflectors.get(kind.kind);
      if (kind.required && !reflector?.synced) return;
      if (reflector && !reflector.synced) return;
    }
    this.#everSynced = true;
    this.#lastSyncTime = new Date(this.#o.now?.() ?? Date.now()).toISOString();
  }

  async #runDiscovery(): Promise<void> {
    const signal = this.#stop.signal;
    const { timing } = this.#o;
    const backoff = new Backoff(timing.backoffInitialMs, timing.backoffMaxMs);
    while (!signal.aborted) {
      let delay = timing.discoveryIntervalMs;
      if (this.#missing.size > 0) {
        try {
          const result = await discoverKinds(this.#client, [...this.#missing.values()]);
          if (signal.aborted) return;
          backoff.reset();
          this.#discovered = true;
          for (const resolved of result.resolved) this.#watch(resolved);
          this.#recover('discovery');
          this.#changed();
        } catch (err) {
          if (signal.aborted) return;
          delay = Math.min(delay, backoff.next());
          this.#fail('discovery', err);
        }
      }
      this.#wakeDiscovery = new AbortController();
      await sleep(delay, AbortSignal.any([signal, this.#wakeDiscovery.signal]));
    }
  }

  #watch(resolved: ResolvedKind<MemberKind>): void {
    const { kind } = resolved.watched;
    if (kind === 'ServiceExport') this.#exportVersion = resolved.version;
    this.#missing.delete(kind);
    const { timing } = this.#o;
    const reflector = new Reflector({
      client: this.#client,
      resolved,
      logger: this.#log,
      normalize: kind === 'ServiceExport' ? normalizeServiceExport : normalizeObject,
      onChange: () => this.#changed(),
      onSynced: () => {
        this.#checkSynced();
        this.#changed();
      },
      // The member's state change is its log line (fleet-membership.ts): each kind's retries are not.
      failureLogLevel: 'debug',
      onProblem: (problem) => {
        // The reflector's one lasting problem: the member's RBAC forbids reading this kind (403).
        if (problem) {
          this.#failures.set(kind, problem.slice(0, MAX_REASON_LENGTH));
          this.#refusals.add(kind);
        } else {
          this.#failures.delete(kind);
          this.#refusals.delete(kind);
        }
        this.#changed();
      },
      onHealth: (failure) => {
        if (failure === undefined) this.#recover(kind);
        else this.#fail(kind, failure);
      },
      onGone: () => {
        this.#log.info({ resource: kindLabel(resolved.watched) }, 'member stopped serving a resource');
        this.#reflectors.delete(kind);
        this.#missing.set(kind, resolved.watched);
        this.#failures.delete(kind);
        this.#refusals.delete(kind);
        this.#changed();
        this.#wakeDiscovery.abort();
      },
      countEvent: () => {},
      watchTimeoutSeconds: timing.watchTimeoutSeconds,
      backoffInitialMs: timing.backoffInitialMs,
      backoffMaxMs: timing.backoffMaxMs,
      pageSize: timing.pageSize,
    });
    this.#reflectors.set(kind, reflector);
    reflector.start();
  }
}
