/**
 * Every API permission the controller uses, in RBAC terms: what deploy/ must grant (least privilege), and what
 * a test checks the ClusterRole against. Keep in step with the code: reflectors list/watch, the status writer
 * gets and patches `/status`, leader election gets/creates/updates its Lease, events are created.
 */
export interface PermissionRule {
  readonly apiGroup: string;
  readonly resources: readonly string[];
  readonly verbs: readonly string[];
  /** Namespaced to the gateway's own namespace (a Role), not cluster-wide. */
  readonly ownNamespace?: boolean;
}

export const CONTROLLER_PERMISSIONS: readonly PermissionRule[] = [
  {
    apiGroup: 'gateway.networking.k8s.io',
    resources: [
      'gatewayclasses',
      'gateways',
      'httproutes',
      'grpcroutes',
      'listenersets',
      'referencegrants',
      'tlsroutes',
      'tcproutes',
      'udproutes',
      'backendtlspolicies',
    ],
    verbs: ['get', 'list', 'watch'],
  },
  {
    apiGroup: 'gateway.networking.k8s.io',
    resources: [
      'gatewayclasses/status',
      'gateways/status',
      'httproutes/status',
      'grpcroutes/status',
      'listenersets/status',
      'tlsroutes/status',
      'tcproutes/status',
      'udproutes/status',
      'backendtlspolicies/status',
    ],
    verbs: ['patch'],
  },
  {
    apiGroup: '',
    resources: ['services', 'secrets', 'namespaces', 'configmaps'],
    verbs: ['get', 'list', 'watch'],
  },
  { apiGroup: 'discovery.k8s.io', resources: ['endpointslices'], verbs: ['get', 'list', 'watch'] },
  {
    apiGroup: 'multicluster.x-k8s.io',
    resources: ['serviceimports', 'clusterprofiles'],
    verbs: ['get', 'list', 'watch'],
  },
  { apiGroup: 'about.k8s.io', resources: ['clusterproperties'], verbs: ['get', 'list', 'watch'] },
  // GEP-3388 retry budgets (experimental channel): XBackendTrafficPolicy and its status.
  {
    apiGroup: 'gateway.networking.x-k8s.io',
    resources: ['xbackendtrafficpolicies'],
    verbs: ['get', 'list', 'watch'],
  },
  {
    apiGroup: 'gateway.networking.x-k8s.io',
    resources: ['xbackendtrafficpolicies/status'],
    verbs: ['patch'],
  },
  {
    apiGroup: 'policy.clusterset-gateway.io',
    resources: ['clusterselectionpolicies'],
    verbs: ['get', 'list', 'watch'],
  },
  {
    apiGroup: 'policy.clusterset-gateway.io',
    resources: ['clusterselectionpolicies/status'],
    verbs: ['patch'],
  },
  { apiGroup: '', resources: ['events'], verbs: ['create'] },
  {
    apiGroup: 'coordination.k8s.io',
    resources: ['leases'],
    verbs: ['get', 'create', 'update'],
    ownNamespace: true,
  },
];
