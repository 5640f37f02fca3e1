import {
  createConfiguration,
  HttpMethod,
  type KubeConfig,
  ServerConfiguration,
} from '@kubernetes/client-node';
import { isRecord } from './json-object.ts';

/**
 * Raw JSON requests over @kubernetes/client-node's own transport (auth, TLS, exec plugins from the kubeconfig).
 * The typed API classes turn timestamps into Date objects and drop fields their models do not know; the gateway
 * wants objects exactly as the API server sends them, as watch events already are.
 */

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface RequestOptions {
  readonly query?: Readonly<Record<string, string | number | boolean | undefined>>;
  readonly body?: unknown;
  readonly contentType?: string;
  readonly timeoutMs?: number;
}

/** A failed request: `statusCode` 0 means the server was not reached. */
export class KubeApiError extends Error {
  readonly code = 'KUBE_API_ERROR';
  readonly statusCode: number;
  /** `Status.reason` from the response body (NotFound, Conflict, Forbidden, Expired, ...). */
  readonly reason: string | undefined;
  readonly method: string;
  readonly path: string;

  constructor(
    method: string,
    path: string,
    statusCode: number,
    reason: string | undefined,
    message: string,
    cause?: unknown,
  ) {
    super(`${method} ${path}: ${statusCode === 0 ? 'unreachable' : statusCode} ${message}`, { cause });
    this.name = 'KubeApiError';
    this.method = method;
    this.path = path;
    this.statusCode = statusCode;
    this.reason = reason;
  }
}

export class KubeApiClient {
  readonly #kubeConfig: KubeConfig;
  readonly #defaultTimeoutMs: number;

  constructor(kubeConfig: KubeConfig, defaultTimeoutMs = 30_000) {
    this.#kubeConfig = kubeConfig;
    this.#defaultTimeoutMs = defaultTimeoutMs;
  }

  get kubeConfig(): KubeConfig {
    return this.#kubeConfig;
  }

  async request(method: Method, path: string, options: RequestOptions = {}): Promise<unknown> {
    const cluster = this.#kubeConfig.getCurrentCluster();
    if (!cluster) throw new KubeApiError(method, path, 0, undefined, 'no current cluster in the kubeconfig');
    const config = createConfiguration({
      baseServer: new ServerConfiguration(cluster.server, {}),
      authMethods: { default: this.#kubeConfig },
    });
    const ctx = config.baseServer.makeRequestContext(path, HttpMethod[method]);
    for (const [key, value] of Object.entries(options.query ?? {})) {
      if (value !== undefined) ctx.setQueryParam(key, String(value));
    }
    ctx.setHeaderParam('Accept', 'application/json');
    if (options.body !== undefined) {
      ctx.setHeaderParam('Content-Type', options.contentType ?? 'application/json');
      ctx.setBody(JSON.stringify(options.body));
    }
    ctx.setSignal(AbortSignal.timeout(options.timeoutMs ?? this.#defaultTimeoutMs));
    let status: number;
    let text: string;
    try {
      await this.#kubeConfig.applySecurityAuthentication(ctx);
      const response = await config.httpApi.send(ctx).toPromise();
      status = response.httpStatusCode;
      text = await response.body.text();
    } catch (err) {
      throw new KubeApiError(
        method,
        path,
        0,
        undefined,
        err instanceof Error ? err.message : String(err),
        err,
      );
    }
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = text;
    }
    if (status < 200 || status > 299) {
      const reason = isRecord(body) && typeof body.reason === 'string' ? body.reason : undefined;
      const message =
        isRecord(body) && typeof body.message === 'string' ? body.message : String(text).slice(0, 200);
      throw new KubeApiError(method, path, status, reason, message);
    }
    return body;
  }
}

/** `/api/v1` or `/apis/<group>/<version>`. */
export function groupVersionPath(group: string, version: string): string {
  return group ? `/apis/${group}/${version}` : `/api/${version}`;
}

export function resourcePath(
  group: string,
  version: string,
  plural: string,
  namespace?: string,
  name?: string,
  subresource?: string,
): string {
  let path = groupVersionPath(group, version);
  if (namespace) path += `/namespaces/${encodeURIComponent(namespace)}`;
  path += `/${plural}`;
  if (name) path += `/${encodeURIComponent(name)}`;
  if (subresource) path += `/${subresource}`;
  return path;
}
