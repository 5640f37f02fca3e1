import type { ConfigWarning } from '../ir/config-warning.ts';

/**
 * Bad input that endpoint resolution degrades around instead of failing (issue 3, "Bad input"). The translator
 * surfaces each as a log line and a metric labelled by `code`; the message names the object and the field.
 */
export type McsWarningCode =
  | 'UnknownTrafficDistribution'
  | 'SliceWithoutSourceCluster'
  | 'DuplicateEndpoint'
  | 'EndpointWithoutZone'
  | 'ExternalNameService'
  | 'DerivedServiceNotFound'
  | 'ClusterNameUnknown'
  | 'InvalidHealthCheckAnnotation'
  /** Not an error: the import resolves and its routes stay accepted; its requests are answered 503 meanwhile. */
  | 'ServiceImportWithoutEndpoints'
  /** `status.endpointSliceObjects: Absent`: the import is served through its ClusterSetIP (cluster-set-ip.ts). */
  | 'ServedThroughClusterSetIP'
  /** `Absent` and no IP in `spec.ips`: no endpoints, requests answered 503. */
  | 'ClusterSetIPMissing'
  | 'NoNetworkGateway'
  | 'InvalidNetworkGateways';

export interface McsWarning extends ConfigWarning {
  readonly code: McsWarningCode;
}
