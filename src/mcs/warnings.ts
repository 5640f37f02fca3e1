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
  | 'InvalidHealthCheckAnnotation';

export interface McsWarning {
  readonly code: McsWarningCode;
  readonly message: string;
}
