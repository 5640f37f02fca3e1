import type { ClusterProfile } from '../snapshot/resources.ts';
import { FLEET_MANAGER, FLEET_PROFILE_NAMESPACE } from './derivation-types.ts';
import type { MemberView } from './member-view.ts';
import { networkGatewayProperties } from './network-gateway-services.ts';

const CLUSTER_ID_PROPERTY = 'cluster.clusterset.k8s.io';

const profileCache = new WeakMap<MemberView, ClusterProfile | null>();

/**
 * A member's properties reach locality tiers and ClusterSelectionPolicy as a ClusterProfile named after it (see
 * src/mcs/cluster-properties.ts), whether it came from a kubeconfig file or a hub's profile.
 */
export function memberProfile(member: MemberView): ClusterProfile | undefined {
  const cached = profileCache.get(member);
  if (cached !== undefined) return cached ?? undefined;
  const properties = Object.entries({ ...networkGatewayProperties(member.services), ...member.properties })
    .filter(([name, value]) => name !== CLUSTER_ID_PROPERTY && value !== '')
    .map(([name, value]) => ({ name, value }));
  const profile: ClusterProfile | null =
    properties.length === 0
      ? null
      : {
          apiVersion: 'multicluster.x-k8s.io/v1alpha1',
          kind: 'ClusterProfile',
          metadata: {
            name: member.name,
            namespace: FLEET_PROFILE_NAMESPACE,
            labels: { 'app.kubernetes.io/managed-by': FLEET_MANAGER },
          },
          status: { properties: [{ name: CLUSTER_ID_PROPERTY, value: member.name }, ...properties] },
        };
  profileCache.set(member, profile);
  return profile ?? undefined;
}
