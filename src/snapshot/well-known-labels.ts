/**
 * The Kubernetes and Multi-Cluster Services (KEP-1645) label and annotation names this project reads and
 * writes, in one place: the snapshot indexes slices by them, mcs resolves backends and cluster identity by
 * them, fleet writes them on the slices it derives.
 */

/** Label on a Service's own EndpointSlices naming the Service. */
export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';
/** Label on MCS EndpointSlices naming the ServiceImport they belong to. */
export const MCS_SERVICE_NAME_LABEL = 'multicluster.kubernetes.io/service-name';
/** Label on MCS EndpointSlices naming the cluster that exported the endpoints. */
export const SOURCE_CLUSTER_LABEL = 'multicluster.kubernetes.io/source-cluster';
/** Annotation on a ServiceImport naming the Service an implementation derived from it. */
export const DERIVED_SERVICE_ANNOTATION = 'multicluster.kubernetes.io/derived-service';
/** Label naming the controller that manages an EndpointSlice. */
export const MANAGED_BY_LABEL = 'endpointslice.kubernetes.io/managed-by';
/** The prefix of the well-known topology labels, which are also ClusterProfile property names. */
export const TOPOLOGY_LABEL_PREFIX = 'topology.kubernetes.io/';
export const REGION_LABEL = 'topology.kubernetes.io/region';
export const ZONE_LABEL = 'topology.kubernetes.io/zone';
