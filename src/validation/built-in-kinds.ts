/**
 * The kinds kube-apiserver serves itself (Kubernetes 1.33, GA versions plus the beta ones still served), by
 * apiVersion: what `kubectl apply` resolves without any CRD. A kind or version outside this table and outside the
 * CRDs is `no matches for kind`, as kubectl reports it.
 */
export const BUILT_IN_KINDS: ReadonlyMap<string, ReadonlySet<string>> = new Map(
  Object.entries({
    v1: [
      'Binding',
      'ComponentStatus',
      'ConfigMap',
      'Endpoints',
      'Event',
      'LimitRange',
      'List',
      'Namespace',
      'Node',
      'PersistentVolume',
      'PersistentVolumeClaim',
      'Pod',
      'PodTemplate',
      'ReplicationController',
      'ResourceQuota',
      'Secret',
      'Service',
      'ServiceAccount',
    ],
    'apps/v1': ['ControllerRevision', 'DaemonSet', 'Deployment', 'ReplicaSet', 'StatefulSet'],
    'autoscaling/v1': ['HorizontalPodAutoscaler'],
    'autoscaling/v2': ['HorizontalPodAutoscaler'],
    'batch/v1': ['CronJob', 'Job'],
    'policy/v1': ['PodDisruptionBudget'],
    'discovery.k8s.io/v1': ['EndpointSlice'],
    'coordination.k8s.io/v1': ['Lease'],
    'events.k8s.io/v1': ['Event'],
    'networking.k8s.io/v1': ['Ingress', 'IngressClass', 'NetworkPolicy', 'IPAddress', 'ServiceCIDR'],
    'rbac.authorization.k8s.io/v1': ['ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding'],
    'apiextensions.k8s.io/v1': ['CustomResourceDefinition'],
    'apiregistration.k8s.io/v1': ['APIService'],
    'admissionregistration.k8s.io/v1': [
      'MutatingWebhookConfiguration',
      'ValidatingWebhookConfiguration',
      'ValidatingAdmissionPolicy',
      'ValidatingAdmissionPolicyBinding',
    ],
    'storage.k8s.io/v1': ['CSIDriver', 'CSINode', 'CSIStorageCapacity', 'StorageClass', 'VolumeAttachment'],
    'scheduling.k8s.io/v1': ['PriorityClass'],
    'node.k8s.io/v1': ['RuntimeClass'],
    'certificates.k8s.io/v1': ['CertificateSigningRequest'],
    'flowcontrol.apiserver.k8s.io/v1': ['FlowSchema', 'PriorityLevelConfiguration'],
    'authentication.k8s.io/v1': ['TokenReview', 'SelfSubjectReview'],
    'authorization.k8s.io/v1': [
      'LocalSubjectAccessReview',
      'SelfSubjectAccessReview',
      'SelfSubjectRulesReview',
      'SubjectAccessReview',
    ],
    'resource.k8s.io/v1beta1': ['DeviceClass', 'ResourceClaim', 'ResourceClaimTemplate', 'ResourceSlice'],
  }).map(([apiVersion, kinds]) => [apiVersion, new Set(kinds)]),
);

/** The API group of an apiVersion (`""` for the core group's `v1`). */
export function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

/** Levenshtein distance, for "did you mean" hints on short names. */
export function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0] as number;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j] as number;
      row[j] = Math.min(above + 1, (row[j - 1] as number) + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length] as number;
}
