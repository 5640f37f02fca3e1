import { compareStrings } from '../snapshot/object-order.ts';
import type { ClusterSelectionPolicy, ClusterSelectionTier, Condition } from '../snapshot/resources.ts';
import type { Snapshot } from '../snapshot/snapshot.ts';
import type { LocalIdentity } from './cluster-identity.ts';
import { type ClusterPropertyIndex, indexClusterProperties } from './cluster-properties.ts';

/**
 * ClusterSelectionPolicy (policy.clusterset-gateway.io/v1alpha1): which clusters a Service's or ServiceImport's
 * traffic may reach, in tiers nearest first, and the boundary around them (docs/cluster-selection.md).
 * Pure: the policies of a Snapshot are resolved once against the cluster properties, into a selector per target
 * that backends.ts applies to the target's endpoints, and a status per policy.
 */

/** How one tier picks clusters, resolved: a predicate over a cluster's name. */
export interface ResolvedTier {
  readonly name: string;
  /** Clusters known now to be in this tier, for status and the topology page (sorted). */
  readonly clusters: readonly string[];
  readonly matches: (cluster: string) => boolean;
  /** The tier's overprovisioning factor (1.4 = 140%); absent: the gateway's flag. */
  readonly overprovisioningFactor?: number;
  /** Per-cluster weights spreading the tier's traffic; absent: by endpoint count. */
  readonly clusterWeights?: ReadonlyMap<string, number>;
}

export interface ResolvedSelection {
  /** `namespace/name` of the policy. */
  readonly policy: string;
  readonly tiers: readonly ResolvedTier[];
  /** `Any`: clusters outside every tier form one last tier; `None`: they are never used. */
  readonly fallback: 'None' | 'Any';
  /** `Cluster`: sessions keep their cluster before their endpoint (docs/sessions.md); absent: `Endpoint`. */
  readonly sessionPinning?: 'Cluster';
}

export interface PolicyStatusReport {
  readonly namespace: string;
  readonly name: string;
  readonly generation: number;
  readonly conditions: readonly Condition[];
  readonly tiers: readonly { readonly name: string; readonly clusters: readonly string[] }[];
  readonly clustersWithoutProperties: readonly {
    readonly cluster: string;
    readonly missing: readonly string[];
  }[];
}

export interface ClusterSelections {
  /** The policy in force for `Service/ns/name` or `ServiceImport/ns/name`. */
  forTarget(
    kind: 'Service' | 'ServiceImport',
    namespace: string,
    name: string,
  ): ResolvedSelection | undefined;
  readonly statuses: readonly PolicyStatusReport[];
}

export const MAX_POLICY_TIERS = 8;
/** The CRD's status lists hold at most this many clusters; with more, the status names the first ones (sorted). */
export const MAX_STATUS_CLUSTERS = 1024;
const SERVICE_IMPORT_GROUP = 'multicluster.x-k8s.io';

const NO_SELECTIONS: ClusterSelections = { forTarget: () => undefined, statuses: [] };

const cache = new WeakMap<
  Snapshot,
  { readonly identity: LocalIdentity; readonly selections: ClusterSelections }
>();

/** The policies of a Snapshot, resolved once per Snapshot and identity. */
export function clusterSelections(snapshot: Snapshot, identity: LocalIdentity): ClusterSelections {
  const cached = cache.get(snapshot);
  if (cached !== undefined && cached.identity === identity) return cached.selections;
  const selections = resolveClusterSelections(snapshot, identity);
  cache.set(snapshot, { identity, selections });
  return selections;
}

/**
 * GEP-713 direct attachment: a policy targets Services and ServiceImports of its own namespace. Two policies on
 * one target: the oldest (creationTimestamp, then namespace/name) wins, the other is `Accepted=False/Conflicted`
 * for that target; a policy none of whose targets exists is `Accepted=False/TargetNotFound`.
 */
export function resolveClusterSelections(snapshot: Snapshot, identity: LocalIdentity): ClusterSelections {
  // Without policies there is nothing to select by: no walk over every slice's labels (per slice change).
  if (snapshot.byKey('ClusterSelectionPolicy').size === 0) return NO_SELECTIONS;
  const properties = indexClusterProperties(snapshot, identity);
  const policies = [...snapshot.list('ClusterSelectionPolicy')].sort(oldestFirst);
  const byTarget = new Map<string, ResolvedSelection>();
  const statuses: PolicyStatusReport[] = [];
  for (const policy of policies) {
    const namespace = policy.metadata.namespace ?? 'default';
    const key = `${namespace}/${policy.metadata.name}`;
    const resolved = resolvePolicy(key, policy, properties);
    const missing: string[] = [];
    const conflicted: string[] = [];
    let attached = 0;
    for (const ref of policy.spec?.targetRefs ?? []) {
      const kind =
        ref.kind === 'ServiceImport' && ref.group === SERVICE_IMPORT_GROUP ? 'ServiceImport' : 'Service';
      const name = ref.name ?? '';
      const target = `${kind}/${namespace}/${name}`;
      if (snapshot.get(kind, namespace, name) === undefined) {
        missing.push(target);
        continue;
      }
      const holder = byTarget.get(target);
      if (holder !== undefined) {
        conflicted.push(`${target} (policy ${holder.policy} is older)`);
        continue;
      }
      byTarget.set(target, resolved);
      attached++;
    }
    statuses.push({
      namespace,
      name: policy.metadata.name,
      generation: policy.metadata.generation ?? 0,
      conditions: [acceptedCondition(attached, missing, conflicted, policy.metadata.generation ?? 0)],
      tiers: resolved.tiers.map((tier) => ({
        name: tier.name,
        clusters: tier.clusters.slice(0, MAX_STATUS_CLUSTERS),
      })),
      clustersWithoutProperties: lackingProperties(policy.spec?.tiers ?? [], properties).slice(
        0,
        MAX_STATUS_CLUSTERS,
      ),
    });
  }
  return {
    forTarget: (kind, namespace, name) => byTarget.get(`${kind}/${namespace}/${name}`),
    statuses,
  };
}

function resolvePolicy(
  key: string,
  policy: ClusterSelectionPolicy,
  properties: ClusterPropertyIndex,
): ResolvedSelection {
  const placed = new Set<string>();
  const tiers = (policy.spec?.tiers ?? []).slice(0, MAX_POLICY_TIERS).map((tier, index) => {
    const matches = tierPredicate(tier, properties);
    const factor = tier.overprovisioningFactor;
    const weights = tier.clusterWeights;
    // A cluster is in the first tier that selects it, so status lists it there only.
    const clusters = properties.clusters.filter((cluster) => !placed.has(cluster) && matches(cluster));
    for (const cluster of clusters) placed.add(cluster);
    return {
      name: tier.name || `tier-${index + 1}`,
      clusters,
      matches,
      ...(factor !== undefined && Number.isFinite(factor) && factor >= 100
        ? { overprovisioningFactor: factor / 100 }
        : {}),
      ...(weights !== undefined && weights.length > 0
        ? { clusterWeights: new Map(weights.map((w) => [w.cluster ?? '', Math.max(0, w.weight ?? 0)])) }
        : {}),
    };
  });
  return {
    policy: key,
    tiers,
    fallback: policy.spec?.fallback === 'Any' ? 'Any' : 'None',
    ...(policy.spec?.sessionPinning === 'Cluster' ? { sessionPinning: 'Cluster' as const } : {}),
  };
}

/** A selector that cannot be evaluated (its property is unknown here) matches nothing: the boundary never widens. */
function tierPredicate(
  tier: ClusterSelectionTier,
  properties: ClusterPropertyIndex,
): (cluster: string) => boolean {
  if (tier.sameCluster === true) return (cluster) => cluster === properties.local;
  if (tier.sameProperty !== undefined) {
    const property = tier.sameProperty;
    const own = properties.of(properties.local)[property];
    if (own === undefined) return () => false;
    return (cluster) => properties.of(cluster)[property] === own;
  }
  if (tier.propertyEquals !== undefined) {
    const { name, value } = tier.propertyEquals;
    if (name === undefined || value === undefined) return () => false;
    return (cluster) => properties.of(cluster)[name] === value;
  }
  if (tier.clusters !== undefined) {
    const listed = new Set(tier.clusters);
    return (cluster) => listed.has(cluster);
  }
  return () => false;
}

function lackingProperties(
  tiers: readonly ClusterSelectionTier[],
  properties: ClusterPropertyIndex,
): { readonly cluster: string; readonly missing: readonly string[] }[] {
  const names = new Set<string>();
  for (const tier of tiers) {
    if (tier.sameProperty !== undefined) names.add(tier.sameProperty);
    if (tier.propertyEquals?.name !== undefined) names.add(tier.propertyEquals.name);
  }
  if (names.size === 0) return [];
  const out: { cluster: string; missing: string[] }[] = [];
  for (const cluster of properties.clusters) {
    const own = properties.of(cluster);
    const missing = [...names].filter((name) => own[name] === undefined).sort();
    if (missing.length > 0) out.push({ cluster, missing });
  }
  return out;
}

function acceptedCondition(
  attached: number,
  missing: readonly string[],
  conflicted: readonly string[],
  generation: number,
): Condition {
  const base = { type: 'Accepted', observedGeneration: generation } as const;
  if (attached > 0) {
    const notes = [
      ...(missing.length > 0 ? [`not found: ${missing.join(', ')}`] : []),
      ...(conflicted.length > 0 ? [`conflicted: ${conflicted.join(', ')}`] : []),
    ];
    return {
      ...base,
      status: 'True',
      reason: 'Accepted',
      message: notes.length > 0 ? `Policy accepted for some targets; ${notes.join('; ')}` : 'Policy accepted',
    };
  }
  if (conflicted.length > 0) {
    return {
      ...base,
      status: 'False',
      reason: 'Conflicted',
      message: `every target already has an older policy: ${conflicted.join(', ')}`,
    };
  }
  return {
    ...base,
    status: 'False',
    reason: 'TargetNotFound',
    message: `no target exists: ${missing.join(', ') || 'no targetRefs'}`,
  };
}

function oldestFirst(a: ClusterSelectionPolicy, b: ClusterSelectionPolicy): number {
  const ta = a.metadata.creationTimestamp ?? '';
  const tb = b.metadata.creationTimestamp ?? '';
  if (ta !== tb) {
    // An object without a timestamp (a file not yet applied anywhere) counts as newest.
    if (ta === '') return 1;
    if (tb === '') return -1;
    return ta < tb ? -1 : 1;
  }
  const ka = `${a.metadata.namespace ?? ''}/${a.metadata.name}`;
  const kb = `${b.metadata.namespace ?? ''}/${b.metadata.name}`;
  return compareStrings(ka, kb);
}
