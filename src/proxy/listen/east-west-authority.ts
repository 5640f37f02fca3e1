import type { IncomingMessage } from 'node:http';
import { hostForMatching } from '../exchange/request-host.ts';

export interface Authority {
  /** Lower-case, no port, no trailing dot. */
  readonly host: string;
  /** The port written in the authority, else the scheme's default (80 for Host and `http://`). */
  readonly port: number;
}

const CLUSTER_LOCAL_SUFFIX = 'svc.cluster.local';

const ABSOLUTE = /^(https?):\/\/([^/?#]*)/i;

/**
 * The authority a request names: an absolute-form target's (RFC 9112 §3.2.2: it wins over Host; the
 * HTTP_PROXY convention), else the Host header. The port selects the service port, so it is kept here, where
 * north-south matching drops it. Undefined when neither is a valid host (answer 400).
 */
export function requestAuthority(req: IncomingMessage): Authority | undefined {
  const url = req.url ?? '';
  let raw: string | undefined;
  let defaultPort = 80;
  if (url.charCodeAt(0) === 47 /* / */) {
    // HTTP/2 names it in :authority (RFC 9113 §8.3.1); Node's compatibility API leaves Host unset then.
    const authority = req.headers[':authority'];
    raw = req.headers.host ?? (typeof authority === 'string' ? authority : undefined);
  } else {
    const absolute = ABSOLUTE.exec(url);
    if (absolute === null) return undefined;
    raw = absolute[2];
    if (absolute[1]!.toLowerCase() === 'https') defaultPort = 443;
  }
  if (raw === undefined || raw === '') return undefined;
  const host = hostForMatching(raw);
  if (host === undefined || host === '') return undefined;
  // hostForMatching accepted the value, so anything after the last ':' outside an IP literal is the port.
  const colon = raw.lastIndexOf(':');
  const port = colon > raw.lastIndexOf(']') ? Number(raw.slice(colon + 1)) : defaultPort;
  if (!Number.isInteger(port) || port < 1 || port > 65535) return undefined;
  return { host, port };
}

/**
 * The service name a request host stands for, as the listener knows it: a ClusterIP is its Service's
 * cluster-local name (MeshClusterIPMatching); `<svc>.<ns>` and `<svc>.<ns>.svc` are written out to
 * `<svc>.<ns>.svc.cluster.local`, as a pod's resolver expands them through its search path (`svc.cluster.local`).
 * A bare `<svc>` is left alone: only the caller's namespace could complete it, and a proxy cannot know it.
 */
export function serviceHostname(host: string, addresses: ReadonlyMap<string, string>): string {
  const named = addresses.get(host);
  if (named !== undefined) return named;
  const first = host.indexOf('.');
  if (first <= 0 || first === host.length - 1) return host;
  const second = host.indexOf('.', first + 1);
  if (second === -1) return `${host}.${CLUSTER_LOCAL_SUFFIX}`;
  // `<svc>.<ns>.svc`: exactly three labels, the last one `svc`.
  if (second > first + 1 && second === host.length - 4 && host.endsWith('.svc'))
    return `${host}.cluster.local`;
  return host;
}
