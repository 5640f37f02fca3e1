/** clusterset-gateway's own API group: ClusterSelectionPolicy (deploy/crds/clusterset-gateway, docs/cluster-selection.md). */

import type { Condition, KubeObject } from './object-meta.ts';

export const POLICY_GROUP = 'policy.clusterset-gateway.io';

export interface PolicyTargetRef {
  readonly group?: string;
  readonly kind?: string;
  readonly name?: string;
}

export interface ClusterSelectionTier {
  readonly name?: string;
  readonly sameCluster?: boolean;
  readonly sameProperty?: string;
  readonly propertyEquals?: { readonly name?: string; readonly value?: string };
  readonly clusters?: readonly string[];
  /** Percent (140 = 1.4). */
  readonly overprovisioningFactor?: number;
  readonly clusterWeights?: readonly { readonly cluster?: string; readonly weight?: number }[];
}

export interface ClusterSelectionPolicySpec {
  readonly targetRefs?: readonly PolicyTargetRef[];
  readonly tiers?: readonly ClusterSelectionTier[];
  readonly fallback?: 'None' | 'Any';
  /** What a session (GEP-1619 session persistence) pins first; default Endpoint (docs/sessions.md). */
  readonly sessionPinning?: 'Cluster' | 'Endpoint';
}

export interface ClusterSelectionPolicy
  extends KubeObject<'ClusterSelectionPolicy', ClusterSelectionPolicySpec> {
  readonly status?: { readonly conditions?: readonly Condition[] };
}
