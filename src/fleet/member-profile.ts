import { CLUSTER_ID_PROPERTY } from '../mcs/cluster-identity.ts';
import { NETWORK_GATEWAYS_PROPERTY } from '../mcs/networks.ts';
import type { ClusterProfile } from '../snapshot/resources.ts';
import { FLEET_MANAGER, FLEET_PROFILE_NAMESPACE } from './derivation-types.ts';
import type { MemberView } from './member-view.ts';
import {
  NETWORK_GATEWAYS_FROM_ANNOTATION,
  networkGatewayProperties,
  networkGatewayServices,
} from './network-gateway-services.ts';

const profileCache = new WeakMap<MemberView, ClusterProfile | null>();

/**
 * A member's properties reach locality tiers and ClusterSelectionPolicy as a ClusterProfile named after it (see
 * src/mcs/cluster-properties.ts), whether it came from a kubeconfig file or a hub's profile.
 */
export function memberProfile(member: MemberView): ClusterProfile | undefined {
  const cached = profileCache.get(member);
  if (cached !== undefined) return cached ?? undefined;
  const discovered = networkGatewayProperties(member.services);
  const properties = Object.entries({ ...discovered, ...member.properties })
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
            ...gatewaysFrom(member, discovered),
          },
          status: { properties: [{ name: CLUSTER_ID_PROPERTY, value: member.name }, ...properties] },
        };
  profileCache.set(member, profile);
  return profile ?? undefined;
}

/** Where the member's gateway list came from, when a Service of its gave it (its own properties did not override). */
function gatewaysFrom(
  member: MemberView,
  discovered: Readonly<Record<string, string>>,
): { annotations?: Record<string, string> } {
  if (
    discovered[NETWORK_GATEWAYS_PROPERTY] === undefined ||
    member.properties[NETWORK_GATEWAYS_PROPERTY] !== undefined
  )
    return {};
  const services = networkGatewayServices(member.services).map((key) => `Service ${key}`);
  return { annotations: { [NETWORK_GATEWAYS_FROM_ANNOTATION]: services.join(',') } };
}
