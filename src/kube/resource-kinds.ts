import type { ResourceKind } from '../snapshot/resources.ts';

/**
 * A kind the source watches, with the API versions to try in order of preference. `K` is wider than the
 * Snapshot's kinds for watches outside the kube source (a fleet member's ServiceExports).
 */
export interface WatchedKind<K extends string = ResourceKind> {
  readonly kind: K;
  readonly group: string;
  readonly versions: readonly string[];
  readonly plural: string;
  readonly namespaced: boolean;
  /** Required kinds gate readiness; optional ones (MCS, About, Cluster Inventory CRDs) may be absent. */
  readonly required: boolean;
  /** Objects the list and watch leave out on the server (`fieldSelector`). */
  readonly fieldSelector?: string;
}

/**
 * Secrets that can never be a certificate, and are the largest and most numerous in a cluster: Helm's release
 * records (up to 1 MiB each, one per release revision) and service account tokens. Left out by the server, as
 * Istio's credential controller does; a Secret's type is immutable, so none can become one we need.
 */
export const SECRET_FIELD_SELECTOR = 'type!=helm.sh/release.v1,type!=kubernetes.io/service-account-token';

const GATEWAY = 'gateway.networking.k8s.io';

export const BASE_KINDS: readonly WatchedKind[] = [
  {
    kind: 'GatewayClass',
    group: GATEWAY,
    versions: ['v1', 'v1beta1'],
    plural: 'gatewayclasses',
    namespaced: false,
    required: true,
  },
  {
    kind: 'Gateway',
    group: GATEWAY,
    versions: ['v1', 'v1beta1'],
    plural: 'gateways',
    namespaced: true,
    required: true,
  },
  {
    kind: 'HTTPRoute',
    group: GATEWAY,
    versions: ['v1', 'v1beta1'],
    plural: 'httproutes',
    namespaced: true,
    required: true,
  },
  // GRPCRoute and ListenerSet (Gateway API v1.1 and v1.6 standard channel): optional, older installs lack them.
  {
    kind: 'GRPCRoute',
    group: GATEWAY,
    versions: ['v1'],
    plural: 'grpcroutes',
    namespaced: true,
    required: false,
  },
  {
    kind: 'ListenerSet',
    group: GATEWAY,
    versions: ['v1'],
    plural: 'listenersets',
    namespaced: true,
    required: false,
  },
  // ReferenceGrant is v1beta1 up to Gateway API v1.4; later releases serve v1 as well, with the same schema.
  {
    kind: 'ReferenceGrant',
    group: GATEWAY,
    versions: ['v1', 'v1beta1'],
    plural: 'referencegrants',
    namespaced: true,
    required: true,
  },
  { kind: 'Service', group: '', versions: ['v1'], plural: 'services', namespaced: true, required: true },
  {
    kind: 'EndpointSlice',
    group: 'discovery.k8s.io',
    versions: ['v1'],
    plural: 'endpointslices',
    namespaced: true,
    required: true,
  },
  {
    kind: 'Secret',
    group: '',
    versions: ['v1'],
    plural: 'secrets',
    namespaced: true,
    required: true,
    fieldSelector: SECRET_FIELD_SELECTOR,
  },
  { kind: 'Namespace', group: '', versions: ['v1'], plural: 'namespaces', namespaced: false, required: true },
  // KEP-1645 / MCS API: v1beta1 is preferred; v1alpha1 is what older installs serve.
  {
    kind: 'ServiceImport',
    group: 'multicluster.x-k8s.io',
    versions: ['v1beta1', 'v1alpha1'],
    plural: 'serviceimports',
    namespaced: true,
    required: false,
  },
  // KEP-2149 About API.
  {
    kind: 'ClusterProperty',
    group: 'about.k8s.io',
    versions: ['v1beta1', 'v1alpha1'],
    plural: 'clusterproperties',
    namespaced: false,
    required: false,
  },
  // TLS (issue 14): TLSRoute (v1 from Gateway API v1.5, v1alpha2 before), BackendTLSPolicy (v1 from v1.4),
  // and the ConfigMaps that hold CA bundles. Optional: a cluster without the CRDs still serves HTTP.
  {
    kind: 'TLSRoute',
    group: GATEWAY,
    versions: ['v1', 'v1alpha3', 'v1alpha2'],
    plural: 'tlsroutes',
    namespaced: true,
    required: false,
  },
  // Layer 4 (issue 44): TCPRoute and UDPRoute (v1 from Gateway API v1.6, v1alpha2 before). Optional.
  {
    kind: 'TCPRoute',
    group: GATEWAY,
    versions: ['v1', 'v1alpha2'],
    plural: 'tcproutes',
    namespaced: true,
    required: false,
  },
  {
    kind: 'UDPRoute',
    group: GATEWAY,
    versions: ['v1', 'v1alpha2'],
    plural: 'udproutes',
    namespaced: true,
    required: false,
  },
  {
    kind: 'BackendTLSPolicy',
    group: GATEWAY,
    versions: ['v1', 'v1alpha3'],
    plural: 'backendtlspolicies',
    namespaced: true,
    required: false,
  },
  // GEP-3388 retry budgets (issue 42): experimental channel only. Optional.
  {
    kind: 'XBackendTrafficPolicy',
    group: 'gateway.networking.x-k8s.io',
    versions: ['v1alpha1'],
    plural: 'xbackendtrafficpolicies',
    namespaced: true,
    required: false,
  },
  { kind: 'ConfigMap', group: '', versions: ['v1'], plural: 'configmaps', namespaced: true, required: false },
  // KEP-4322 Cluster Inventory API.
  {
    kind: 'ClusterProfile',
    group: 'multicluster.x-k8s.io',
    versions: ['v1beta1', 'v1alpha1'],
    plural: 'clusterprofiles',
    namespaced: true,
    required: false,
  },
  // clusterset-gateway's own policy (docs/cluster-selection.md); optional like every CRD not in Gateway API's core.
  {
    kind: 'ClusterSelectionPolicy',
    group: 'policy.clusterset-gateway.io',
    versions: ['v1alpha1'],
    plural: 'clusterselectionpolicies',
    namespaced: true,
    required: false,
  },
];

/** Extra ServiceImport-like kinds (GEP-1748 lets implementations accept e.g. `net.gke.io` ServiceImport). */
export function watchedKinds(
  serviceImportKinds: readonly { readonly group: string; readonly kind: string }[],
): WatchedKind[] {
  const kinds = [...BASE_KINDS];
  for (const { group, kind } of serviceImportKinds) {
    if (kind !== 'ServiceImport' || kinds.some((k) => k.kind === 'ServiceImport' && k.group === group))
      continue;
    // The version is whatever discovery reports as the group's preferred one.
    kinds.push({
      kind: 'ServiceImport',
      group,
      versions: [],
      plural: 'serviceimports',
      namespaced: true,
      required: false,
    });
  }
  return kinds;
}

export function kindLabel(kind: WatchedKind<string>): string {
  return kind.group ? `${kind.plural}.${kind.group}` : kind.plural;
}
