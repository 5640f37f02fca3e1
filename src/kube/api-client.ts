import type { IncomingMessage } from 'node:http';
import { isRecord } from '../snapshot/json-object.ts';
import { type ApiEndpoint, readBody, sendToApiServer } from './api-endpoint.ts';

/**
 * Raw JSON requests to an API server (api-endpoint.ts: TLS and credentials). The gateway wants objects exactly
 * as the API server sends them, as watch events are, not the typed models of a client library.
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
  readonly #endpoint: ApiEndpoint;
  readonly #defaultTimeoutMs: number;
  readonly #stop: AbortSignal | undefined;

  /** `stop` ends every request in flight and refuses new ones: the owner is shutting down. */
  constructor(endpoint: ApiEndpoint, defaultTimeoutMs = 30_000, stop?: AbortSignal) {
    this.#endpoint = endpoint;
    this.#defaultTimeoutMs = defaultTimeoutMs;
    this.#stop = stop;
  }

  #signal(...signals: AbortSignal[]): AbortSignal {
    const all = this.#stop ? [...signals, this.#stop] : signals;
    return all.length === 1 ? (all[0] as AbortSignal) : AbortSignal.any(all);
  }

  async request(method: Method, path: string, options: RequestOptions = {}): Promise<unknown> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (options.body !== undefined) headers['content-type'] = options.contentType ?? 'application/json';
    let status: number;
    let text: string;
    try {
      const response = await sendToApiServer(this.#endpoint, {
        method,
        path: withQuery(path, options.query),
        headers,
        ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
        signal: this.#signal(AbortSignal.timeout(options.timeoutMs ?? this.#defaultTimeoutMs)),
      });
      status = response.statusCode ?? 0;
      text = await readBody(response);
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
    if (status < 200 || status > 299) throw apiError(method, path, status, body, text);
    return body;
  }

  /**
   * A GET whose response is read as it arrives (a watch). Non-2xx answers are read whole and thrown as
   * KubeApiError; `signal` ends the request.
   */
  async stream(path: string, query: RequestOptions['query'], signal: AbortSignal): Promise<IncomingMessage> {
    let response: IncomingMessage;
    try {
      response = await sendToApiServer(this.#endpoint, {
        method: 'GET',
        path: withQuery(path, query),
        headers: { accept: 'application/json' },
        signal: this.#signal(signal),
      });
    } catch (err) {
      throw new KubeApiError(
        'GET',
        path,
        0,
        undefined,
        err instanceof Error ? err.message : String(err),
        err,
      );
    }
    const status = response.statusCode ?? 0;
    if (status >= 200 && status <= 299) return response;
    const text = await readBody(response).catch(() => '');
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {}
    throw apiError('GET', path, status, body, text);
  }
}

function withQuery(path: string, query: RequestOptions['query']): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query ?? {}))
    if (value !== undefined) params.set(key, String(value));
  const search = params.toString();
  return search ? `${path}${path.includes('?') ? '&' : '?'}${search}` : path;
}

function apiError(method: string, path: string, status: number, body: unknown, text: string): KubeApiError {
  const reason = isRecord(body) && typeof body.reason === 'string' ? body.reason : undefined;
  const message =
    isRecord(body) && typeof body.message === 'string' ? body.message : String(text).slice(0, 200);
  return new KubeApiError(method, path, status, reason, message);
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
