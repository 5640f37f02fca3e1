import type { ClusterProfile, EndpointSlice } from '../snapshot/resources.ts';
import type { Snapshot } from '../snapshot/snapshot.ts';
import { REGION_LABEL } from '../snapshot/well-known-labels.ts';
import type { McsWarning } from './warnings.ts';

/** Who the gateway is; passed to `translate()` and never read from the environment there. */
export interface LocalIdentity {
  /** Name of the cluster the gateway runs in; `--cluster`, else the ClusterProperty `cluster.clusterset.k8s.io`. */
  readonly cluster?: string;
  readonly clusterset?: string;
  readonly region?: string;
  readonly zone?: string;
  readonly node?: string;
  /** Properties of the gateway's own cluster from its flags (`--cluster-property`), for cluster selection. */
  readonly properties?: Readonly<Record<string, string>>;
}

/** The cluster name used when neither `--cluster` nor the ClusterProperty `cluster.clusterset.k8s.io` says. */
export const LOCAL_CLUSTER_FALLBACK = 'local';

/** About API (KEP-2149) well-known ClusterProperty names. */
export const CLUSTER_ID_PROPERTY = 'cluster.clusterset.k8s.io';
export const CLUSTERSET_ID_PROPERTY = 'clusterset.k8s.io';

export function localClusterName(identity: LocalIdentity): string {
  return identity.cluster ?? LOCAL_CLUSTER_FALLBACK;
}

export interface IdentityReport {
  readonly identity: LocalIdentity;
  readonly warnings: readonly McsWarning[];
}

/**
 * Who the gateway is. Flags (`overrides`: `--cluster`, `--zone`, ...) win; otherwise the cluster name comes from
 * the ClusterProperty `cluster.clusterset.k8s.io` and the clusterset from `clusterset.k8s.io` (KEP-2149,
 * `spec.value`). Node, zone and region only come from overrides (flags or the downward API). When no cluster
 * name is known, endpoints of Services are attributed to the cluster `local`; see `resolveIdentityReport`.
 */
export function resolveIdentity(snapshot: Snapshot, overrides: LocalIdentity): LocalIdentity {
  return resolveIdentityReport(snapshot, overrides).identity;
}

/** `resolveIdentity`, plus a `ClusterNameUnknown` warning when neither flag nor ClusterProperty names the cluster. */
export function resolveIdentityReport(snapshot: Snapshot, overrides: LocalIdentity): IdentityReport {
  const cluster = overrides.cluster || propertyValue(snapshot, CLUSTER_ID_PROPERTY);
  const clusterset = overrides.clusterset || propertyValue(snapshot, CLUSTERSET_ID_PROPERTY);
  const identity: LocalIdentity = {
    ...stripEmpty(overrides),
    ...(cluster ? { cluster } : {}),
    ...(clusterset ? { clusterset } : {}),
  };
  const warnings: McsWarning[] = cluster
    ? []
    : [
        {
          code: 'ClusterNameUnknown',
          message: `no --cluster flag and no ClusterProperty ${CLUSTER_ID_PROPERTY}; the local cluster is called "${LOCAL_CLUSTER_FALLBACK}", so ServiceImport slices from this cluster count as remote`,
        },
      ];
  return { identity, warnings };
}

/**
 * The region of the cluster an EndpointSlice comes from. The rule, first match wins:
 * 1. the slice's own label `topology.kubernetes.io/region` (an exporter may copy it onto the slice);
 * 2. the ClusterProfile (Cluster Inventory API, KEP-4322) of that cluster. A ClusterProfile's region is its
 *    `status.properties` entry `topology.kubernetes.io/region`, else its label `topology.kubernetes.io/region`.
 *    Among ClusterProfiles with a region (in `namespace/name` order), the first whose `status.properties`
 *    entry `cluster.clusterset.k8s.io` equals the cluster name wins; failing that, the first whose
 *    `metadata.name` equals the cluster name;
 * 3. for the local cluster, the gateway's own region (`--region`);
 * 4. otherwise unknown: the endpoints never count as same-region.
 * Regions are not guessed from zone names (naming differs per cloud).
 */
export function regionOfSlice(
  snapshot: Snapshot,
  slice: EndpointSlice,
  cluster: string,
  identity: LocalIdentity,
): string | undefined {
  return (
    slice.metadata.labels?.[REGION_LABEL] ||
    profileRegions(snapshot).get(cluster) ||
    (cluster === localClusterName(identity) ? identity.region : undefined) ||
    undefined
  );
}

const regionCache = new WeakMap<Snapshot, ReadonlyMap<string, string>>();

/** Cluster name to region, from ClusterProfiles; built once per Snapshot. */
function profileRegions(snapshot: Snapshot): ReadonlyMap<string, string> {
  let regions = regionCache.get(snapshot);
  if (!regions) {
    const byProperty = new Map<string, string>();
    const byName = new Map<string, string>();
    for (const profile of snapshot.list('ClusterProfile')) {
      const region = profileRegion(profile);
      if (!region) continue;
      const clusterId = profileProperty(profile, CLUSTER_ID_PROPERTY);
      if (clusterId && !byProperty.has(clusterId)) byProperty.set(clusterId, region);
      if (!byName.has(profile.metadata.name)) byName.set(profile.metadata.name, region);
    }
    const merged = new Map(byName);
    for (const [cluster, region] of byProperty) merged.set(cluster, region);
    regions = merged;
    regionCache.set(snapshot, regions);
  }
  return regions;
}

function profileRegion(profile: ClusterProfile): string | undefined {
  return profileProperty(profile, REGION_LABEL) || profile.metadata.labels?.[REGION_LABEL] || undefined;
}

function profileProperty(profile: ClusterProfile, name: string): string | undefined {
  return profile.status?.properties?.find((p) => p.name === name)?.value || undefined;
}

function propertyValue(snapshot: Snapshot, name: string): string | undefined {
  const value = snapshot.get('ClusterProperty', undefined, name)?.spec?.value;
  return value ? value : undefined;
}

function stripEmpty(identity: LocalIdentity): LocalIdentity {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(identity)) {
    if (typeof value === 'string' && value !== '') out[key] = value;
  }
  if (identity.properties !== undefined && Object.keys(identity.properties).length > 0) {
    out['properties'] = identity.properties;
  }
  return out as LocalIdentity;
}
