/**
 * The Kubernetes objects the controller reads, as typed views.
 *
 * Sources validate the envelope (apiVersion, kind, metadata.name) once, at the edge; everything under
 * `spec` is typed here as the CRDs describe it, with every field optional, because objects read from a
 * folder of YAML have not been through an API server's defaulting. Translation applies the defaults.
 *
 * This module is the one to import a resource type from: the declarations live per API group in
 * object-meta.ts, gateway-api-resources.ts, core-resources.ts and mcs-resources.ts; here are the union of
 * every kind read and the kind lists.
 */

import type { ConfigMap, EndpointSlice, Namespace, Secret, Service } from './core-resources.ts';
import type {
  BackendTLSPolicy,
  Gateway,
  GatewayClass,
  GRPCRoute,
  HTTPRoute,
  ListenerSet,
  ReferenceGrant,
  TCPRoute,
  TLSRoute,
  UDPRoute,
  XBackendTrafficPolicy,
} from './gateway-api-resources.ts';
import type { ClusterProfile, ClusterProperty, ServiceImport } from './mcs-resources.ts';
import type { ClusterSelectionPolicy } from './policy-resources.ts';

export type * from './core-resources.ts';
export type * from './gateway-api-resources.ts';
export type * from './mcs-resources.ts';
export type * from './object-meta.ts';
export type * from './policy-resources.ts';

export type AnyResource =
  | TLSRoute
  | TCPRoute
  | UDPRoute
  | BackendTLSPolicy
  | XBackendTrafficPolicy
  | ConfigMap
  | GatewayClass
  | Gateway
  | HTTPRoute
  | GRPCRoute
  | ListenerSet
  | ReferenceGrant
  | Service
  | EndpointSlice
  | Secret
  | Namespace
  | ServiceImport
  | ClusterProperty
  | ClusterProfile
  | ClusterSelectionPolicy;

export type ResourceKind = AnyResource['kind'];

export const RESOURCE_KINDS: readonly ResourceKind[] = [
  'GatewayClass',
  'Gateway',
  'HTTPRoute',
  'GRPCRoute',
  'ListenerSet',
  'ReferenceGrant',
  'Service',
  'EndpointSlice',
  'Secret',
  'Namespace',
  'ServiceImport',
  'ClusterProperty',
  'ClusterProfile',
  'TLSRoute',
  'TCPRoute',
  'UDPRoute',
  'BackendTLSPolicy',
  'XBackendTrafficPolicy',
  'ConfigMap',
  'ClusterSelectionPolicy',
];

/** Cluster-scoped kinds are keyed by name alone. */
export const CLUSTER_SCOPED_KINDS: ReadonlySet<ResourceKind> = new Set([
  'GatewayClass',
  'Namespace',
  'ClusterProperty',
]);
