import type { IncomingMessage } from 'node:http';
import type { CompiledPort } from './compile-table.ts';
import { hostForMatching } from './request-host.ts';
import { RequestView } from './request-view.ts';

function findHost(raw: readonly string[]): string | undefined {
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length === 4 && name.toLowerCase() === 'host') return raw[i + 1];
  }
  return undefined;
}

/**
 * Selects listener, virtual host and route entry for a request: listener by Host (listener isolation: only
 * the most specific listener whose hostname matches serves it), then virtual host, then the first entry in
 * precedence order whose path, method, headers and query match. Paths match without the query string.
 */
export function matchRequest(port: CompiledPort, req: IncomingMessage): RequestView {
  const view = new RequestView(req);
  const rawHost = findHost(req.rawHeaders);
  view.rawHost = rawHost;
  const host = hostForMatching(rawHost ?? '');
  const url = req.url ?? '';
  if (host === undefined || url.charCodeAt(0) !== 47 /* origin-form only */) {
    view.status = 400;
    return view;
  }
  view.host = host;
  const listener = port.listeners.select(host);
  view.listener = listener;
  const index = listener?.virtualHosts.select(host);
  if (index === undefined) {
    view.status = 404;
    return view;
  }
  const q = url.indexOf('?');
  if (q === -1) view.path = url;
  else {
    view.path = url.slice(0, q);
    view.rawQuery = url.slice(q + 1);
  }
  const entry = index.lookup(view);
  if (entry === undefined) view.status = 404;
  else view.action = entry.action;
  return view;
}
