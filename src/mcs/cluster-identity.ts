import type { LocalIdentity } from '../gateway/options.ts';

/** The cluster name used when neither `--cluster` nor the ClusterProperty `cluster.clusterset.k8s.io` says. */
export const LOCAL_CLUSTER_FALLBACK = 'local';

export function localClusterName(identity: LocalIdentity): string {
  return identity.cluster ?? LOCAL_CLUSTER_FALLBACK;
}
