import type { ClusterProfile } from '../snapshot/resources.ts';
import type { Snapshot } from '../snapshot/snapshot.ts';
import {
  REGION_LABEL,
  SOURCE_CLUSTER_LABEL,
  TOPOLOGY_LABEL_PREFIX,
  ZONE_LABEL,
} from '../snapshot/well-known-labels.ts';
import { CLUSTER_ID_PROPERTY, type LocalIdentity, localClusterName } from './cluster-identity.ts';

/** Property name to value, for one cluster. */
export type PropertyMap = Readonly<Record<string, string>>;

/** Every known cluster's properties, and where the gateway's own cluster stands. */
export interface ClusterPropertyIndex {
  readonly local: string;
  /** Properties of a cluster; an empty map for a cluster nobody describes. */
  of(cluster: string): PropertyMap;
  /** Every cluster named by a ClusterProfile, a source-cluster label, or the gateway itself. */
  readonly clusters: readonly string[];
}

/** EndpointSlice labels that describe the cluster the slice comes from (KEP-1645 exporters may copy them). */

/**
 * Cluster properties for cluster selection, one property at a time, first match wins (never guessed):
 * - the gateway's own cluster: its flags (`--region`, `--cluster-property name=value`), then the About API
 *   ClusterProperties of the source it reads (`about.k8s.io`, the local cluster's own), then its ClusterProfile;
 * - every cluster: its ClusterProfile's `status.properties`, then the profile's labels, then the
 *   `topology.kubernetes.io/*` labels (zone excepted: a zone is an endpoint's, not a cluster's) of the
 *   EndpointSlices it exported.
 * A ClusterProfile describes the cluster named by its `cluster.clusterset.k8s.io` property, else by its name.
 * In fleet mode each member's About API ClusterProperties reach here as its ClusterProfile's properties.
 */
export function indexClusterProperties(snapshot: Snapshot, identity: LocalIdentity): ClusterPropertyIndex {
  const local = localClusterName(identity);
  const byCluster = new Map<string, Record<string, string>>();
  const add = (cluster: string, name: string, value: string | undefined) => {
    if (value === undefined || value === '') return;
    let props = byCluster.get(cluster);
    if (props === undefined) {
      props = {};
      byCluster.set(cluster, props);
    }
    if (!(name in props)) props[name] = value;
  };

  if (identity.region !== undefined) add(local, REGION_LABEL, identity.region);
  for (const [name, value] of Object.entries(identity.properties ?? {})) add(local, name, value);
  for (const property of snapshot.list('ClusterProperty'))
    add(local, property.metadata.name, property.spec?.value);

  const known = (cluster: string) => {
    if (!byCluster.has(cluster)) byCluster.set(cluster, {});
  };
  for (const profile of snapshot.list('ClusterProfile')) {
    const cluster = profileCluster(profile);
    known(cluster);
    for (const p of profile.status?.properties ?? []) add(cluster, p.name, p.value);
  }
  for (const profile of snapshot.list('ClusterProfile')) {
    const cluster = profileCluster(profile);
    for (const [name, value] of Object.entries(profile.metadata.labels ?? {})) add(cluster, name, value);
  }
  for (const slice of snapshot.list('EndpointSlice')) {
    const labels = slice.metadata.labels;
    const cluster = labels?.[SOURCE_CLUSTER_LABEL];
    if (cluster === undefined || labels === undefined) continue;
    known(cluster);
    for (const [name, value] of Object.entries(labels)) {
      if (name.startsWith(TOPOLOGY_LABEL_PREFIX) && name !== ZONE_LABEL) add(cluster, name, value);
    }
  }
  known(local);
  const empty: PropertyMap = {};
  return {
    local,
    of: (cluster) => byCluster.get(cluster) ?? empty,
    clusters: [...byCluster.keys()].sort(),
  };
}

function profileCluster(profile: ClusterProfile): string {
  return (
    profile.status?.properties?.find((p) => p.name === CLUSTER_ID_PROPERTY)?.value || profile.metadata.name
  );
}
