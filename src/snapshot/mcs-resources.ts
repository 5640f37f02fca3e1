/** Multicluster kinds: MCS API ServiceImport, About API ClusterProperty, Cluster Profile API ClusterProfile. */
import type { KubeObject } from './object-meta.ts';

// ---- Multi-Cluster Services API (multicluster.x-k8s.io, v1alpha1 and v1beta1 share a schema) ----

export interface ServiceImportPort {
  readonly name?: string;
  readonly protocol?: string;
  readonly appProtocol?: string;
  readonly port: number;
}
export interface ServiceImportSpec {
  readonly ports?: readonly ServiceImportPort[];
  readonly ips?: readonly string[];
  readonly type?: 'ClusterSetIP' | 'Headless';
  readonly sessionAffinity?: string;
  /** A free string in the CRD; see src/mcs/traffic-distribution.ts for the values understood. */
  readonly trafficDistribution?: string;
}
/**
 * `status.endpointSliceObjects` (KEP-1645, mcs-api after v0.5.0): whether the MCS implementation publishes
 * EndpointSlices for the import (`Present`) or only its ClusterSetIP (`Absent`; Cilium syncs slices only on request).
 */
export type EndpointSliceObjects = 'Present' | 'Absent';
export interface ServiceImportStatus {
  readonly endpointSliceObjects?: EndpointSliceObjects;
  readonly clusters?: readonly { readonly cluster: string }[];
}
/** v1beta1 moved some fields to the top level (ports, ips, type); sources fold them into `spec`. */
export interface ServiceImport extends KubeObject<'ServiceImport', ServiceImportSpec> {
  readonly status?: ServiceImportStatus;
}

// ---- About API (about.k8s.io) and Cluster Profile API (multicluster.x-k8s.io) ----

/** ClusterProperty has `spec.value`; the well-known names are `cluster.clusterset.k8s.io` and `clusterset.k8s.io`. */
export type ClusterProperty = KubeObject<'ClusterProperty', { readonly value?: string }>;

export interface ClusterProfileStatus {
  readonly properties?: readonly { readonly name: string; readonly value: string }[];
}
export interface ClusterProfile
  extends KubeObject<'ClusterProfile', { readonly clusterManager?: { readonly name?: string } }> {
  readonly status?: ClusterProfileStatus;
}
