import type { IncomingMessage } from 'node:http';
import type { CompiledAction } from '../compile/compile-actions.ts';
import type { CompiledListener } from '../compile/compile-listeners.ts';

/**
 * One request as route matching sees it. Header values by lower-case name and query parameters are parsed
 * at most once and only when a predicate asks; the outcome of matching is stored on it.
 */
export class RequestView {
  readonly req: IncomingMessage;
  /** Host for matching: no port, lower-case. */
  host = '';
  /** The Host header exactly as the client sent it. */
  rawHost: string | undefined;
  /** The request target in origin form as forwarded: the normalized path and the query exactly as sent. */
  target = '';
  /** Normalized path without the query string (path-normalization.ts). */
  path = '';
  /** Raw query string without `?`, or '' when absent. */
  rawQuery = '';
  /** 0 when a route matched (`action` is set), else the status to answer (400, 404, 307). */
  status = 0;
  /** Why a 400 was given, when the reply should say more than `bad request`. */
  reason = '';
  /** Where a 307 sends the client (the path normalization's unescape-and-redirect). */
  location: string | undefined;
  listener: CompiledListener | undefined;
  action: CompiledAction | undefined;
  #query: URLSearchParams | undefined;

  constructor(req: IncomingMessage) {
    this.req = req;
  }

  header(lowerName: string): string | undefined {
    const value = this.req.headers[lowerName];
    if (value === undefined) return undefined;
    return typeof value === 'string' ? value : value.join(', ');
  }

  /**
   * First value of a query parameter. Gateway API leaves repeated parameters undefined and recommends the
   * first value (HTTPQueryParamMatch).
   */
  query(name: string): string | null {
    this.#query ??= new URLSearchParams(this.rawQuery);
    return this.#query.get(name);
  }
}
