/** Gateway API kinds (gateway.networking.k8s.io), spec fields as the CRDs describe them (see resources.ts). */
import type { KubeObject, LabelSelector } from './object-meta.ts';

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
  readonly sessionPersistence?: SessionPersistence;
}
/** GEP-1619 (experimental channel): HTTPRouteRule, GRPCRouteRule and XBackendTrafficPolicy share it. */
export interface SessionPersistence {
  readonly sessionName?: string;
  readonly absoluteTimeout?: string;
  readonly type?: 'Cookie' | 'Header';
  readonly cookieConfig?: { readonly lifetimeType?: 'Permanent' | 'Session' };
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
  readonly sessionPersistence?: SessionPersistence;
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

// ---- TLS (issue 14): TLSRoute, BackendTLSPolicy ----

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

// ---- Layer 4 (issue 44): TCPRoute, UDPRoute (standard from Gateway API v1.6) ----

export interface L4RouteRule {
  readonly name?: string;
  readonly backendRefs?: readonly (BackendObjectReference & { readonly weight?: number })[];
}
export interface L4RouteSpec {
  readonly parentRefs?: readonly ParentReference[];
  readonly rules?: readonly L4RouteRule[];
}
export type TCPRoute = KubeObject<'TCPRoute', L4RouteSpec>;
export type UDPRoute = KubeObject<'UDPRoute', L4RouteSpec>;

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

// ---- XBackendTrafficPolicy (gateway.networking.x-k8s.io/v1alpha1, GEP-3388 retry budgets; issue 42) ----

export interface XBackendTrafficPolicySpec {
  readonly targetRefs?: readonly { readonly group?: string; readonly kind?: string; readonly name: string }[];
  readonly retryConstraint?: {
    readonly budget?: { readonly percent?: number; readonly interval?: string };
    readonly minRetryRate?: { readonly count?: number; readonly interval?: string };
  };
  readonly sessionPersistence?: SessionPersistence;
}
export type XBackendTrafficPolicy = KubeObject<'XBackendTrafficPolicy', XBackendTrafficPolicySpec>;
