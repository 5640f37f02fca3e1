import type { AnyResource, Condition, EndpointSliceObjects, ServiceImport } from '../snapshot/resources.ts';
import type { ServiceExport } from './member-view.ts';

/** What the fleet derivation produces and the small helpers its parts share. */

/** Marks every object this module makes (slices' managed-by, profiles' app.kubernetes.io/managed-by). */
export const FLEET_MANAGER = 'clusterset-gateway-fleet';
/** Where the derived ClusterProfiles that carry members' properties live. */
export const FLEET_PROFILE_NAMESPACE = 'clusterset-gateway-fleet';

/** KEP-1645 / mcs-api ServiceExport condition reasons for `Conflict`. */
export type ConflictReason =
  | 'PortConflict'
  | 'TypeConflict'
  | 'SessionAffinityConflict'
  | 'SessionAffinityConfigConflict'
  | 'TrafficDistributionConflict';

/** One ServiceExport's computed status, as it would be written to the member. */
export interface ExportStatus {
  readonly cluster: string;
  readonly namespace: string;
  readonly name: string;
  readonly generation?: number;
  /** `Valid`, `Ready`, `Conflict` (the last only for a valid export). */
  readonly conditions: readonly Condition[];
}

export interface ImportConflict {
  readonly cluster: string;
  readonly reasons: readonly ConflictReason[];
  readonly message: string;
}

/** A derived ServiceImport, for operators: where its spec came from and who disagrees. */
export interface DerivedImport {
  readonly namespace: string;
  readonly name: string;
  /** `members`: derived from the oldest export; `local ServiceImport`: a user's object of that name wins. */
  readonly specFrom: 'members' | 'local ServiceImport';
  /** The cluster whose export is oldest: its Service's properties are the import's. */
  readonly oldestExport: string;
  /** Clusters whose valid export contributes endpoints, oldest export first. */
  readonly clusters: readonly string[];
  readonly endpoints: number;
  readonly spec: ServiceImport['spec'];
  /** The derived ServiceImport's `status.endpointSliceObjects`: the fleet always publishes the slices. */
  readonly endpointSliceObjects: EndpointSliceObjects;
  readonly conflicts: readonly ImportConflict[];
}

export interface FleetDerivation {
  /** Derived ServiceImports (only where no local one exists), MCS EndpointSlices and members' ClusterProfiles. */
  readonly objects: readonly AnyResource[];
  /**
   * Clusters the fleet speaks for: the local source's MCS slices labelled with one of these source clusters are
   * replaced by the members' own (synced and stale members only: a member still connecting has said nothing).
   */
  readonly authoritativeClusters: ReadonlySet<string>;
  readonly imports: readonly DerivedImport[];
  readonly exports: readonly ExportStatus[];
  /** Members' objects (or parts of them) left out, each naming the member and the object. */
  readonly problems: readonly string[];
}

/** Whether the local source has a ServiceImport object `namespace/name`. */
export type LocalImportLookup = (namespace: string, name: string) => boolean;

export function condition(
  type: string,
  status: Condition['status'],
  reason: string,
  message: string,
): Condition {
  return { type, status, reason, message };
}

export function generationOf(exp: ServiceExport): { generation?: number } {
  return exp.metadata.generation !== undefined ? { generation: exp.metadata.generation } : {};
}
