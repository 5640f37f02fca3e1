/** Kubernetes core kinds the controller reads (core/v1, discovery.k8s.io/v1). */
import type { KubeObject } from './object-meta.ts';

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
  readonly clusterIPs?: readonly string[];
  readonly selector?: Readonly<Record<string, string>>;
  readonly ports?: readonly ServicePort[];
  readonly externalName?: string;
  /** KEP-4444: PreferClose (deprecated alias of PreferSameZone), PreferSameZone, PreferSameNode. */
  readonly trafficDistribution?: string;
  /** `None` (the default) or `ClientIP`. */
  readonly sessionAffinity?: string;
  readonly sessionAffinityConfig?: { readonly clientIP?: { readonly timeoutSeconds?: number } };
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

/** ConfigMap has no spec; CA bundles sit in `data` (`ca.crt`). */
export interface ConfigMap extends KubeObject<'ConfigMap', never> {
  readonly data?: Readonly<Record<string, string>>;
}
