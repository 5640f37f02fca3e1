import type { Condition } from '../snapshot/resources.ts';

/**
 * What translation says about an object, in the shape the API server's status subresource takes.
 * The kube status writer patches it; in file mode /config_dump shows it under `statuses`.
 */
export type StatusKind =
  | 'GatewayClass'
  | 'Gateway'
  | 'HTTPRoute'
  | 'GRPCRoute'
  | 'TLSRoute'
  | 'TCPRoute'
  | 'UDPRoute'
  | 'ListenerSet'
  | 'BackendTLSPolicy'
  | 'XBackendTrafficPolicy'
  | 'ClusterSelectionPolicy';

export interface StatusUpdate {
  readonly kind: StatusKind;
  readonly namespace?: string;
  readonly name: string;
  /** The generation the status was computed from (metadata.generation of the input). */
  readonly generation: number;
  readonly status:
    | GatewayClassStatus
    | GatewayStatus
    | HTTPRouteStatus
    | ListenerSetStatus
    | PolicyStatus
    | ClusterSelectionPolicyStatus;
}

export interface GatewayClassStatus {
  readonly conditions: readonly Condition[];
  readonly supportedFeatures?: readonly { readonly name: string }[];
}

export interface ListenerStatus {
  readonly name: string;
  readonly attachedRoutes: number;
  readonly supportedKinds: readonly { readonly group: string; readonly kind: string }[];
  readonly conditions: readonly Condition[];
}

export interface GatewayStatus {
  readonly addresses: readonly { readonly type: string; readonly value: string }[];
  readonly conditions: readonly Condition[];
  readonly listeners: readonly ListenerStatus[];
  /** ListenerSets accepted on this Gateway (GEP-1713). */
  readonly attachedListenerSets?: number;
}

export interface ListenerSetStatus {
  readonly conditions: readonly Condition[];
  readonly listeners: readonly ListenerStatus[];
}

export interface RouteParentStatus {
  readonly parentRef: {
    readonly group: string;
    readonly kind: string;
    readonly namespace?: string;
    readonly name: string;
    readonly sectionName?: string;
    readonly port?: number;
  };
  readonly controllerName: string;
  readonly conditions: readonly Condition[];
}

export interface HTTPRouteStatus {
  /** Only this controller's entries; the status writer merges them with other controllers' entries. */
  readonly parents: readonly RouteParentStatus[];
}

/**
 * BackendTLSPolicy and XBackendTrafficPolicy status (GEP-713 PolicyAncestorStatus): one entry per Gateway that uses
 * the policy.
 */
export interface PolicyStatus {
  readonly ancestors: readonly {
    readonly ancestorRef: {
      readonly group: string;
      readonly kind: string;
      readonly namespace?: string;
      readonly name: string;
    };
    readonly controllerName: string;
    readonly conditions: readonly Condition[];
  }[];
}

/** ClusterSelectionPolicy status: the object is this project's own, so the whole status is ours. */
export interface ClusterSelectionPolicyStatus {
  readonly conditions: readonly Condition[];
  /** The tiers as resolved now, with the clusters each holds. */
  readonly tiers: readonly { readonly name: string; readonly clusters: readonly string[] }[];
  /** Clusters lacking a property a tier selects by. */
  readonly clustersWithoutProperties: readonly {
    readonly cluster: string;
    readonly missing: readonly string[];
  }[];
}

/** `Kind/namespace/name`, or `Kind/name` for a GatewayClass: the key /config_dump uses. */
export function statusKey(update: Pick<StatusUpdate, 'kind' | 'namespace' | 'name'>): string {
  return update.namespace
    ? `${update.kind}/${update.namespace}/${update.name}`
    : `${update.kind}/${update.name}`;
}
