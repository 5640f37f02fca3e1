/**
 * The Kubernetes objects the controller reads, as typed views.
 *
 * Sources validate the envelope (apiVersion, kind, metadata.name) once, at the edge; everything under
 * `spec` is typed here as the CRDs describe it, with every field optional, because objects read from a
 * folder of YAML have not been through an API server's defaulting. Translation applies the defaults.
 */

export interface ObjectMeta {
  readonly name: string;
  readonly namespace?: string;
  readonly uid?: string;
  readonly generation?: number;
  readonly resourceVersion?: string;
  readonly creationTimestamp?: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
}

export interface KubeObject<Kind extends string = string, Spec = unknown> {
  readonly apiVersion: string;
  readonly kind: Kind;
  readonly metadata: ObjectMeta;
  readonly spec?: Spec;
}

export interface Condition {
  readonly type: string;
  readonly status: 'True' | 'False' | 'Unknown';
  readonly reason: string;
  readonly message: string;
  readonly observedGeneration?: number;
  readonly lastTransitionTime?: string;
}

// ---- Gateway API (gateway.networking.k8s.io) ----

export interface ParametersReference {
  readonly group?: string;
  readonly kind?: string;
  readonly name?: string;
  readonly namespace?: string;
}

export interface GatewayClassSpec {
  readonly controllerName?: string;
  readonly parametersRef?: ParametersReference;
  readonly description?: string;
}
export type GatewayClass = KubeObject<'GatewayClass', GatewayClassSpec>;

export interface LabelSelectorRequirement {
  readonly key: string;
  readonly operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
  readonly values?: readonly string[];
}
export interface LabelSelector {
  readonly matchLabels?: Readonly<Record<string, string>>;
  readonly matchExpressions?: readonly LabelSelectorRequirement[];
}

export interface SecretObjectReference {
  readonly group?: string;
  readonly kind?: string;
  readonly name: string;
  readonly namespace?: string;
}

export interface RouteGroupKind {
  readonly group?: string;
  readonly kind: string;
}

export interface Listener {
  readonly name: string;
  readonly hostname?: string;
  readonly port: number;
  readonly protocol: string;
  readonly tls?: {
    readonly mode?: 'Terminate' | 'Passthrough';
    readonly certificateRefs?: readonly SecretObjectReference[];
    readonly options?: Readonly<Record<string, string>>;
  };
  readonly allowedRoutes?: {
    readonly namespaces?: { readonly from?: 'All' | 'Same' | 'Selector'; readonly selector?: LabelSelector };
    readonly kinds?: readonly RouteGroupKind[];
  };
}

export interface GatewaySpec {
  readonly gatewayClassName?: string;
  readonly listeners?: readonly Listener[];
  readonly addresses?: readonly { readonly type?: string; readonly value?: string }[];
  readonly infrastructure?: unknown;
  readonly tls?: GatewayTLSConfig;
  /** Which namespaces' ListenerSets may attach (default: none). */
  readonly allowedListeners?: {
    readonly namespaces?: {
      readonly from?: 'All' | 'Same' | 'Selector' | 'None';
      readonly selector?: LabelSelector;
    };
  };
}
/** Gateway.spec.tls (client certificates, issue 14): frontend validation and the backend client certificate. */
export interface FrontendTLSValidation {
  readonly caCertificateRefs?: readonly {
    readonly group?: string;
    readonly kind?: string;
    readonly name: string;
    readonly namespace?: string;
  }[];
  readonly mode?: 'AllowValidOnly' | 'AllowInsecureFallback';
}
export interface GatewayTLSConfig {
  readonly backend?: { readonly clientCertificateRef?: SecretObjectReference };
  readonly frontend?: {
    readonly default?: { readonly validation?: FrontendTLSValidation };
    readonly perPort?: readonly {
      readonly port: number;
      readonly tls?: { readonly validation?: FrontendTLSValidation };
    }[];
  };
}
export type Gateway = KubeObject<'Gateway', GatewaySpec>;

export interface ParentReference {
  readonly group?: string;
  readonly kind?: string;
  readonly namespace?: string;
  readonly name: string;
  readonly sectionName?: string;
  readonly port?: number;
}

export interface HTTPPathMatch {
  readonly type?: 'Exact' | 'PathPrefix' | 'RegularExpression';
  readonly value?: string;
}
export interface HTTPHeaderMatch {
  readonly type?: 'Exact' | 'RegularExpression';
  readonly name: string;
  readonly value: string;
}
export type HTTPQueryParamMatch = HTTPHeaderMatch;

export interface HTTPRouteMatch {
  readonly path?: HTTPPathMatch;
  readonly headers?: readonly HTTPHeaderMatch[];
  readonly queryParams?: readonly HTTPQueryParamMatch[];
  readonly method?: string;
}

export interface HTTPHeader {
  readonly name: string;
  readonly value: string;
}
export interface HTTPHeaderFilter {
  readonly set?: readonly HTTPHeader[];
  readonly add?: readonly HTTPHeader[];
  readonly remove?: readonly string[];
}
export interface HTTPPathModifier {
  readonly type: 'ReplaceFullPath' | 'ReplacePrefixMatch';
  readonly replaceFullPath?: string;
  readonly replacePrefixMatch?: string;
}
export interface BackendObjectReference {
  readonly group?: string;
  readonly kind?: string;
  readonly name: string;
  readonly namespace?: string;
  readonly port?: number;
}
export interface HTTPRouteFilter {
  readonly type: string;
  readonly requestHeaderModifier?: HTTPHeaderFilter;
  readonly responseHeaderModifier?: HTTPHeaderFilter;
  readonly requestRedirect?: {
    readonly scheme?: string;
    readonly hostname?: string;
    readonly path?: HTTPPathModifier;
    readonly port?: number;
    readonly statusCode?: number;
  };
  readonly urlRewrite?: { readonly hostname?: string; readonly path?: HTTPPathModifier };
  readonly requestMirror?: {
    readonly backendRef: BackendObjectReference;
    readonly percent?: number;
    readonly fraction?: { readonly numerator: number; readonly denominator?: number };
  };
  readonly cors?: {
    readonly allowOrigins?: readonly string[];
    readonly allowCredentials?: boolean;
    readonly allowMethods?: readonly string[];
    readonly allowHeaders?: readonly string[];
    readonly exposeHeaders?: readonly string[];
    readonly maxAge?: number;
  };
  readonly extensionRef?: { readonly group: string; readonly kind: string; readonly name: string };
}
export interface HTTPBackendRef extends BackendObjectReference {
  readonly weight?: number;
  readonly filters?: readonly HTTPRouteFilter[];
}
export interface HTTPRouteRule {
  readonly name?: string;
  readonly matches?: readonly HTTPRouteMatch[];
  readonly filters?: readonly HTTPRouteFilter[];
  readonly backendRefs?: readonly HTTPBackendRef[];
  readonly timeouts?: { readonly request?: string; readonly backendRequest?: string };
  readonly retry?: {
    readonly codes?: readonly number[];
    readonly attempts?: number;
    readonly backoff?: string;
  };
}
export interface HTTPRouteSpec {
  readonly parentRefs?: readonly ParentReference[];
  readonly hostnames?: readonly string[];
  readonly rules?: readonly HTTPRouteRule[];
}
export type HTTPRoute = KubeObject<'HTTPRoute', HTTPRouteSpec>;

// GRPCRoute (gateway.networking.k8s.io/v1): filters and backendRefs share HTTPRoute's shapes.
export interface GRPCMethodMatch {
  readonly type?: 'Exact' | 'RegularExpression';
  readonly service?: string;
  readonly method?: string;
}
export interface GRPCRouteMatch {
  readonly method?: GRPCMethodMatch;
  readonly headers?: readonly HTTPHeaderMatch[];
}
export interface GRPCRouteRule {
  readonly name?: string;
  readonly matches?: readonly GRPCRouteMatch[];
  readonly filters?: readonly HTTPRouteFilter[];
  readonly backendRefs?: readonly HTTPBackendRef[];
}
export interface GRPCRouteSpec {
  readonly parentRefs?: readonly ParentReference[];
  readonly hostnames?: readonly string[];
  readonly rules?: readonly GRPCRouteRule[];
}
export type GRPCRoute = KubeObject<'GRPCRoute', GRPCRouteSpec>;

// ListenerSet (gateway.networking.k8s.io/v1): listeners added to a parent Gateway that allows them.
export interface ListenerSetSpec {
  readonly parentRef?: {
    readonly group?: string;
    readonly kind?: string;
    readonly name: string;
    readonly namespace?: string;
  };
  readonly listeners?: readonly Listener[];
}
export type ListenerSet = KubeObject<'ListenerSet', ListenerSetSpec>;

export interface ReferenceGrantSpec {
  readonly from?: readonly { readonly group: string; readonly kind: string; readonly namespace: string }[];
  readonly to?: readonly { readonly group: string; readonly kind: string; readonly name?: string }[];
}
export type ReferenceGrant = KubeObject<'ReferenceGrant', ReferenceGrantSpec>;

// ---- core/v1 and discovery.k8s.io/v1 ----

export interface ServicePort {
  readonly name?: string;
  readonly protocol?: string;
  readonly appProtocol?: string;
  readonly port: number;
  readonly targetPort?: number | string;
}
export interface ServiceSpec {
  readonly type?: 'ClusterIP' | 'NodePort' | 'LoadBalancer' | 'ExternalName';
  readonly clusterIP?: string;
  readonly selector?: Readonly<Record<string, string>>;
  readonly ports?: readonly ServicePort[];
  readonly externalName?: string;
  /** KEP-4444: PreferClose (deprecated alias of PreferSameZone), PreferSameZone, PreferSameNode. */
  readonly trafficDistribution?: string;
}
export type Service = KubeObject<'Service', ServiceSpec>;

export interface EndpointConditions {
  readonly ready?: boolean;
  readonly serving?: boolean;
  readonly terminating?: boolean;
}
export interface Endpoint {
  readonly addresses: readonly string[];
  readonly conditions?: EndpointConditions;
  readonly hostname?: string;
  readonly nodeName?: string;
  readonly zone?: string;
  readonly targetRef?: { readonly kind?: string; readonly name?: string; readonly namespace?: string };
  readonly hints?: { readonly forZones?: readonly { readonly name: string }[] };
}
export interface EndpointPort {
  readonly name?: string;
  readonly port?: number;
  readonly protocol?: string;
  readonly appProtocol?: string;
}
/** EndpointSlice has no spec: its fields sit at the top level. */
export interface EndpointSlice extends KubeObject<'EndpointSlice', never> {
  readonly addressType?: 'IPv4' | 'IPv6' | 'FQDN';
  readonly endpoints?: readonly Endpoint[];
  readonly ports?: readonly EndpointPort[];
}

/** Secret data is base64, as the API server serves it; `stringData` is folded into `data` by the sources. */
export interface Secret extends KubeObject<'Secret', never> {
  readonly type?: string;
  readonly data?: Readonly<Record<string, string>>;
}

export type Namespace = KubeObject<'Namespace', never>;

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
/** v1beta1 moved some fields to the top level (ports, ips, type); sources fold them into `spec`. */
export type ServiceImport = KubeObject<'ServiceImport', ServiceImportSpec>;

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

// ---- TLS (issue 14): TLSRoute, BackendTLSPolicy (gateway.networking.k8s.io), ConfigMap (core/v1) ----

export interface TLSRouteRule {
  readonly name?: string;
  readonly backendRefs?: readonly (BackendObjectReference & { readonly weight?: number })[];
}
export interface TLSRouteSpec {
  readonly parentRefs?: readonly ParentReference[];
  readonly hostnames?: readonly string[];
  readonly rules?: readonly TLSRouteRule[];
}
export type TLSRoute = KubeObject<'TLSRoute', TLSRouteSpec>;

export interface BackendTLSPolicySpec {
  readonly targetRefs?: readonly {
    readonly group?: string;
    readonly kind?: string;
    readonly name: string;
    readonly sectionName?: string;
  }[];
  readonly validation?: {
    readonly caCertificateRefs?: readonly {
      readonly group?: string;
      readonly kind?: string;
      readonly name: string;
    }[];
    readonly wellKnownCACertificates?: string;
    readonly hostname?: string;
    readonly subjectAltNames?: readonly {
      readonly type?: 'Hostname' | 'URI';
      readonly hostname?: string;
      readonly uri?: string;
    }[];
  };
  readonly options?: Readonly<Record<string, string>>;
}
export type BackendTLSPolicy = KubeObject<'BackendTLSPolicy', BackendTLSPolicySpec>;

/** ConfigMap has no spec; CA bundles sit in `data` (`ca.crt`). */
export interface ConfigMap extends KubeObject<'ConfigMap', never> {
  readonly data?: Readonly<Record<string, string>>;
}

export type AnyResource =
  | TLSRoute
  | BackendTLSPolicy
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
  | ClusterProfile;

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
  'BackendTLSPolicy',
  'ConfigMap',
];

/** Cluster-scoped kinds are keyed by name alone. */
export const CLUSTER_SCOPED_KINDS: ReadonlySet<ResourceKind> = new Set([
  'GatewayClass',
  'Namespace',
  'ClusterProperty',
]);
