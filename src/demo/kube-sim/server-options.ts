/** What the simulated API server (server.ts) is started with, and what it records of each request. */

export interface KubeApiServerOptions {
  /** CRDs installed at start (`<plural>.<group>`); all of them by default. */
  readonly crds?: readonly string[];
  /** Served versions per CRD, overriding the upstream set (e.g. only `v1alpha1` of ServiceImport). */
  readonly crdVersions?: Readonly<Record<string, readonly string[]>>;
  /** How often watches that asked for bookmarks get one. */
  readonly bookmarkIntervalMs?: number;
  /** Events kept for watches to resume from; older ones are compacted away (410 Gone). */
  readonly historyLimit?: number;
  /** The user named in Forbidden messages. */
  readonly user?: string;
  /** Create the `default` and `kube-system` namespaces, as a fresh cluster has them. */
  readonly defaultNamespaces?: boolean;
  /** Serve HTTPS with this certificate (PEM) instead of plain HTTP. */
  readonly tls?: {
    readonly cert: string;
    readonly key: string;
    /** Client certificates signed by this CA authenticate as `x509:<CN>` (see acceptToken). */
    readonly clientCa?: string;
  };
  /**
   * Bearer-token authentication: every request (discovery included) whose token this refuses gets 401
   * Unauthorized, as kube-apiserver answers an unknown or expired token. A request without a token but with a
   * verified client certificate is asked about as `x509:<CN>`. Unset: every request is let in.
   */
  readonly acceptToken?: (token: string | undefined) => boolean;
  /**
   * Accept EndpointSlice addresses in 127.0.0.0/8 and ::1, which kube-apiserver refuses: the demo's simulated
   * clusters run their pods as processes on this machine's loopback.
   */
  readonly allowLoopbackEndpoints?: boolean;
}

export interface RequestRecord {
  readonly method: string;
  readonly verb: string;
  readonly path: string;
  readonly group: string;
  readonly resource: string;
  readonly subresource: string | undefined;
  readonly namespace: string | undefined;
  readonly name: string | undefined;
  readonly contentType: string | undefined;
  /** The bearer token the client sent: tells apart clients given different kubeconfigs. */
  readonly token: string | undefined;
  readonly status: number;
}
