import type { Condition, KubeObject } from '../snapshot/object-meta.ts';
import type { ClusterProperty, EndpointSlice, Service } from '../snapshot/resources.ts';

/** Where a member cluster was found: a ClusterProfile on the hub (or in the manifests folder), or a kubeconfig file. */
export type MemberOrigin =
  | {
      readonly kind: 'ClusterProfile';
      readonly namespace: string;
      readonly name: string;
      readonly provider: string;
    }
  | { readonly kind: 'Kubeconfig'; readonly file: string };

export function describeOrigin(origin: MemberOrigin): string {
  return origin.kind === 'ClusterProfile'
    ? `ClusterProfile ${origin.namespace}/${origin.name}`
    : `kubeconfig file ${origin.file}`;
}

/**
 * How the gateway's connection to a member stands.
 * - `connecting`: no successful list yet;
 * - `synced`: every watched kind listed and watching;
 * - `stale`: it was synced once and has lost its API server (unreachable, credentials refused, garbage): its last
 *   good objects are kept and it is retried with backoff;
 * - `error`: it never synced and its last attempt failed (unreachable, an exec plugin that failed or printed no
 *   ExecCredential): retried with backoff;
 * - `refused`: it will not be used as it is: its name is claimed by another member, or it never synced and its API
 *   server refuses the credentials (401, 403); a refusal is retried with backoff too.
 */
export type MemberState = 'connecting' | 'synced' | 'stale' | 'error' | 'refused';

/** A member's ServiceExport (multicluster.x-k8s.io v1beta1 or v1alpha1, whichever the member serves). */
export type ServiceExport = KubeObject<'ServiceExport', Record<string, unknown>>;

/**
 * One member cluster as the fleet layer sees it at one moment: who it is, how it is reached, and the objects read
 * from it. Immutable: the membership layer publishes a new view whenever any of this changes. Never carries
 * credentials.
 */
export interface MemberView {
  /** The cluster's name: its About API `cluster.clusterset.k8s.io` ClusterProperty, else the profile's (file's) name. */
  readonly name: string;
  readonly origin: MemberOrigin;
  /** The API server URL, for operators (no credentials, no query string). */
  readonly server: string;
  readonly state: MemberState;
  /** Why the member is not `synced`, for /config_dump and logs; never contains a secret. */
  readonly reason?: string;
  /** RFC 3339 time of the last complete sync. */
  readonly lastSyncTime?: string;
  /** Cluster properties for locality: ClusterProfile `status.properties`, then the member's ClusterProperties. */
  readonly properties: Readonly<Record<string, string>>;
  readonly serviceExports: readonly ServiceExport[];
  readonly services: readonly Service[];
  readonly endpointSlices: readonly EndpointSlice[];
  readonly clusterProperties: readonly ClusterProperty[];
}

/** What publishes member views: the membership layer (ClusterProfiles, kubeconfig files). */
export interface FleetMembers {
  /** Calls `onChange` with every member's current view after each (coalesced) change. */
  start(onChange: (members: readonly MemberView[]) => void): Promise<void>;
  stop(): Promise<void>;
  /** Every member's view now, before the (debounced) next `onChange`. */
  viewsNow?(): readonly MemberView[];
  /**
   * Replaces the `status.conditions` of a member's ServiceExport (`--write-export-status`). Rejects with a
   * message naming the member and never a credential.
   */
  writeExportStatus?(
    cluster: string,
    namespace: string,
    name: string,
    conditions: readonly Condition[],
  ): Promise<void>;
}

/** Why a member that never listed and has not failed is `connecting` (its `reason`). */
export const FIRST_LIST = 'waiting for the first list';

/**
 * A member whose first list is still under way: readiness and the first routing table wait for it, as Envoy's
 * initial fetch does. One that failed (unreachable, refused credentials, an exec plugin past its timeout) does
 * not: it must not keep the gateway out of service.
 */
export function awaitingFirstList(member: MemberView): boolean {
  return member.state === 'connecting' && (member.reason === undefined || member.reason === FIRST_LIST);
}
