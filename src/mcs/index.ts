/** src/mcs public API: endpoint resolution, cluster identity, locality tiers (pure; DESIGN.md §1). */
export {
  type BackendResolution,
  DERIVED_SERVICE_ANNOTATION,
  type ResolvedBackendCluster,
  resolveServiceBackend,
  resolveServiceImportBackend,
  SOURCE_CLUSTER_LABEL,
  UNKNOWN_CLUSTER,
} from './backends.ts';
export {
  CLUSTER_ID_PROPERTY,
  CLUSTERSET_ID_PROPERTY,
  type IdentityReport,
  LOCAL_CLUSTER_FALLBACK,
  localClusterName,
  REGION_LABEL,
  regionOfSlice,
  resolveIdentity,
  resolveIdentityReport,
} from './cluster-identity.ts';
export {
  buildTiers,
  localityOf,
  type ParsedTrafficDistribution,
  parseTrafficDistribution,
  type TierName,
  type Tiers,
} from './traffic-distribution.ts';
export type { McsWarning, McsWarningCode } from './warnings.ts';
