/**
 * Gateway API features this implementation supports, as published in GatewayClass
 * `status.supportedFeatures` (GEP-2162; names as in the conformance suite's pkg/features, sorted).
 */
export const SUPPORTED_FEATURES: readonly string[] = [
  'BackendTLSPolicy',
  'BackendTLSPolicySANValidation',
  'GRPCRoute',
  'GRPCRouteNamedRouteRule',
  'Gateway',
  'GatewayAddressEmpty',
  'GatewayBackendClientCertificate',
  'GatewayFrontendClientCertificateValidation',
  'GatewayFrontendClientCertificateValidationInsecureFallback',
  'GatewayHTTPListenerIsolation',
  'GatewayHTTPSListenerDetectMisdirectedRequests',
  'GatewayPort8080',
  'GatewayStaticAddresses',
  'HTTPRoute',
  'HTTPRoute303RedirectStatusCode',
  'HTTPRoute307RedirectStatusCode',
  'HTTPRoute308RedirectStatusCode',
  'HTTPRouteBackendProtocolH2C',
  'HTTPRouteBackendProtocolWebSocket',
  'HTTPRouteBackendRequestHeaderModification',
  'HTTPRouteBackendTimeout',
  'HTTPRouteCORS',
  'HTTPRouteDestinationPortMatching',
  'HTTPRouteHostRewrite',
  'HTTPRouteMethodMatching',
  'HTTPRouteNamedRouteRule',
  'HTTPRouteParentRefPort',
  'HTTPRoutePathRedirect',
  'HTTPRoutePathRewrite',
  'HTTPRoutePortRedirect',
  'HTTPRouteQueryParamMatching',
  'HTTPRouteRequestMirror',
  'HTTPRouteRequestMultipleMirrors',
  'HTTPRouteRequestPercentageMirror',
  'HTTPRouteRequestTimeout',
  'HTTPRouteResponseHeaderModification',
  'HTTPRouteRetry',
  'HTTPRouteSchemeRedirect',
  'ListenerSet',
  'ReferenceGrant',
  'TCPRoute',
  'TLSRoute',
  'TLSRouteModeMixed',
  'TLSRouteModeTerminate',
  'UDPRoute',
];

/**
 * The Mesh features (pkg/features/mesh.go) the east-west listener adds when it is on (MESH-HTTP, MESH-GRPC).
 * MeshConsumerRoute is not among them: a route from another namespace applies only to callers of that
 * namespace, and a proxy that pods reach over the network cannot tell which namespace a caller is in.
 */
export const MESH_FEATURES: readonly string[] = [
  'Mesh',
  'MeshClusterIPMatching',
  'MeshHTTPRouteBackendRequestHeaderModification',
  'MeshHTTPRouteNamedRouteRule',
  'MeshHTTPRouteQueryParamMatching',
  'MeshHTTPRouteRedirectPath',
  'MeshHTTPRouteRedirectPort',
  'MeshHTTPRouteRewritePath',
  'MeshHTTPRouteSchemeRedirect',
];

/** What GatewayClass status lists: the Mesh features only while the east-west listener is on. */
export function supportedFeatures(eastWest: boolean): string[] {
  return eastWest ? [...SUPPORTED_FEATURES, ...MESH_FEATURES].sort() : [...SUPPORTED_FEATURES];
}
