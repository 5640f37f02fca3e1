import type { IncomingMessage } from 'node:http';
import type { CompiledPort } from '../compile/compile-table.ts';
import { DEFAULT_PATH_NORMALIZATION, normalizePath, type PathNormalization } from './path-normalization.ts';
import { hostForMatching } from './request-host.ts';
import { RequestView } from './request-view.ts';

/**
 * The request's authority: Host, or on HTTP/2 the :authority pseudo-header, which comes first among the raw
 * headers and wins over a Host also sent (RFC 9113 §8.3.1).
 */
function findHost(raw: readonly string[]): string | undefined {
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length === 4 && name.toLowerCase() === 'host') return raw[i + 1];
    if (name.length === 10 && name === ':authority') return raw[i + 1];
  }
  return undefined;
}

/**
 * Selects listener, virtual host and route entry for a request: listener by Host (listener isolation: only
 * the most specific listener whose hostname matches serves it), then virtual host, then the first entry in
 * precedence order whose path, method, headers and query match. Paths match without the query string, after
 * normalization (path-normalization.ts); the normalized path is also what is forwarded and what redirects
 * and rewrites start from. A path normalization refuses answers 400, or 307 to the normalized path.
 * `selectHost`, when given, is the name to select listener and virtual host by (the east-west listener's
 * canonical service name for a short name or a ClusterIP); `view.host` stays the host as requested.
 */
export function matchRequest(
  port: CompiledPort,
  req: IncomingMessage,
  selectHost?: string,
  paths: PathNormalization = DEFAULT_PATH_NORMALIZATION,
): RequestView {
  const view = new RequestView(req);
  let rawHost = findHost(req.rawHeaders);
  let url = req.url ?? '';
  if (url.charCodeAt(0) !== 47 /* / */) {
    // Absolute form (RFC 9112 §3.2.2): the target's authority replaces Host, the rest is the origin form.
    const absolute = /^https?:\/\/([^/?#]*)([^#]*)$/i.exec(url);
    if (absolute === null) {
      view.status = 400;
      return view;
    }
    rawHost = absolute[1];
    url = absolute[2] === '' ? '/' : absolute[2]!.charCodeAt(0) === 63 ? `/${absolute[2]}` : absolute[2]!;
  }
  view.rawHost = rawHost;
  const host = hostForMatching(rawHost ?? '');
  if (host === undefined) {
    view.target = url;
    view.status = 400;
    return view;
  }
  view.host = host;
  const q = url.indexOf('?');
  const rawPath = q === -1 ? url : url.slice(0, q);
  if (q !== -1) view.rawQuery = url.slice(q + 1);
  const normalized = normalizePath(rawPath, paths);
  if (normalized.kind === 'refuse') {
    view.target = url;
    view.status = 400;
    view.reason = normalized.reason;
    return view;
  }
  view.path = normalized.path;
  // The query string is never touched: only the path part of the target changes.
  view.target =
    normalized.path === rawPath ? url : q === -1 ? normalized.path : normalized.path + url.slice(q);
  if (normalized.kind === 'redirect') {
    // Envoy's UNESCAPE_AND_REDIRECT: a relative Location, so scheme, host and port stay the client's.
    view.status = 307;
    view.location = view.target;
    return view;
  }
  const selected = selectHost ?? host;
  const listener = port.listeners.select(selected);
  view.listener = listener;
  const index = listener?.virtualHosts.select(selected);
  if (index === undefined) {
    view.status = 404;
    return view;
  }
  const entry = index.lookup(view);
  if (entry === undefined) view.status = 404;
  else view.action = entry.action;
  return view;
}
