import type { IncomingMessage } from 'node:http';
import type { Http2Stream } from 'node:http2';
import type { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import type { BackendTls } from '../../ir/route-table.ts';
import type { CompiledAction, ForwardTarget } from '../compile/compile-actions.ts';
import { applyHeaderMods, connectionListedNames, dropNames } from '../compile/header-ops.ts';
import { rewritePath } from '../compile/redirect.ts';
import type { RequestView } from './request-view.ts';

/** What to do with each request header name on the way upstream; absent names are copied as they are. */
const Special = {
  Host: 1,
  ForwardedFor: 2,
  Overwritten: 3,
  ContentLength: 4,
  TransferEncoding: 5,
  Drop: 6,
  Connection: 7,
  GrpcTimeout: 8,
} as const;
type Special = (typeof Special)[keyof typeof Special];

const SPECIAL = new Map<string, Special>([
  ['host', Special.Host],
  ['x-forwarded-for', Special.ForwardedFor],
  ['x-forwarded-proto', Special.Overwritten],
  ['x-forwarded-host', Special.Overwritten],
  ['content-length', Special.ContentLength],
  ['transfer-encoding', Special.TransferEncoding],
  ['connection', Special.Connection],
  ['grpc-timeout', Special.GrpcTimeout],
  // Hop-by-hop (RFC 9110 §7.6.1); `expect` is answered by Node's server before the request reaches us.
  ['keep-alive', Special.Drop],
  ['proxy-connection', Special.Drop],
  ['proxy-authenticate', Special.Drop],
  ['proxy-authorization', Special.Drop],
  ['te', Special.Drop],
  ['trailer', Special.Drop],
  ['upgrade', Special.Drop],
  ['http2-settings', Special.Drop],
  ['expect', Special.Drop],
  // HTTP/2 pseudo-headers describe this hop's request; the upstream request carries its own (RFC 9113 §8.3).
  [':authority', Special.Drop],
  [':method', Special.Drop],
  [':path', Special.Drop],
  [':scheme', Special.Drop],
  [':protocol', Special.Drop],
]);

/**
 * By name length, whether any name in SPECIAL has it: most request headers (user-agent, accept, cookie, ...)
 * are copied without being lower-cased or looked up.
 */
const SPECIAL_LENGTHS: readonly boolean[] = (() => {
  const lengths: boolean[] = [];
  for (const name of SPECIAL.keys()) lengths[name.length] = true;
  return Array.from(lengths, (has) => has === true);
})();

/** The client's address as X-Forwarded-For shows it: IPv4 peers of a dual-stack socket without `::ffff:`. */
function clientAddress(req: IncomingMessage): string {
  const address = req.socket?.remoteAddress ?? '';
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
}

/** The stream under an HTTP/2 compatibility request (served through the HTTP/1 types, see Http2Sessions). */
export function http2Stream(req: IncomingMessage): Http2Stream {
  return (req as unknown as { stream: Http2Stream }).stream;
}

/**
 * A request whose body is another stream than itself: the lean HTTP/2 path's, whose body is the HTTP/2 stream.
 */
export const kRequestBody = Symbol('clusterset-gateway.requestBody');

/** The request body as a stream: the request itself, or the stream it names under `kRequestBody`. */
export function requestBody(req: IncomingMessage): Readable {
  return (req as IncomingMessage & { [kRequestBody]?: Readable })[kRequestBody] ?? req;
}

export interface UpstreamRequestHead {
  readonly headers: string[];
  readonly hasBody: boolean;
  /** The grpc-timeout header's value (forwarded too), '' when repeated (malformed), undefined when absent. */
  readonly grpcTimeout: string | undefined;
  /** Path and query as sent upstream: the client's raw target unless a URLRewrite changed the path. */
  readonly path: string;
}

/**
 * Builds the upstream request head from the client's raw headers in one pass: hop-by-hop headers and the
 * ones Connection lists are dropped; Host is kept exactly as sent (with its port) unless a URLRewrite sets a
 * hostname; X-Forwarded-For is appended to, X-Forwarded-Proto/-Host are set; then the filters' header
 * modifiers run in order. `keepUpgrade` keeps Connection/Upgrade for a tunnelled upgrade request.
 */
export function buildUpstreamHead(
  req: IncomingMessage,
  view: RequestView,
  action: CompiledAction,
  target: ForwardTarget,
  keepUpgrade: boolean,
): UpstreamRequestHead {
  const raw = req.rawHeaders;
  let headers: string[] = [];
  const host = view.rawHost;
  let forwardedFor: string | undefined;
  let hasBody = false;
  let hasLength = false;
  let listed: string[] | undefined;
  let grpcTimeout: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    const value = raw[i + 1]!;
    const special = SPECIAL_LENGTHS[name.length] === true ? SPECIAL.get(name.toLowerCase()) : undefined;
    if (special === undefined) {
      headers.push(name, value);
      continue;
    }
    switch (special) {
      case Special.Host:
        break;
      case Special.ForwardedFor:
        forwardedFor = forwardedFor === undefined ? value : `${forwardedFor}, ${value}`;
        break;
      case Special.ContentLength:
        hasLength = true;
        if (value !== '0') hasBody = true;
        headers.push(name, value);
        break;
      case Special.TransferEncoding:
        // undici frames the streamed body itself (chunked), so only the fact that there is a body matters.
        hasBody = true;
        break;
      case Special.Connection: {
        const extra = connectionListedNames(value);
        if (extra !== undefined) listed = listed === undefined ? extra : listed.concat(extra);
        if (keepUpgrade) headers.push('connection', 'upgrade');
        break;
      }
      case Special.GrpcTimeout:
        grpcTimeout = grpcTimeout === undefined ? value : '';
        headers.push(name, value);
        break;
      case Special.Drop:
        if (keepUpgrade && name.length === 7 && name.toLowerCase() === 'upgrade') headers.push(name, value);
        break;
      default:
        break;
    }
  }
  // An HTTP/2 request has a body unless its HEADERS frame ended the stream; Content-Length is optional there.
  if (!hasLength && req.httpVersionMajor === 2) hasBody = !http2Stream(req).endAfterHeaders;
  if (listed !== undefined) headers = dropNames(headers, listed);
  const clientHost = host ?? '';
  const outHost = target.rewriteHost ?? host;
  if (outHost !== undefined) headers.push('host', outHost);
  const remote = clientAddress(req);
  headers.push(
    'x-forwarded-for',
    forwardedFor === undefined ? remote : `${forwardedFor}, ${remote}`,
    'x-forwarded-proto',
    action.scheme,
    'x-forwarded-host',
    clientHost,
  );
  if (target.requestMods.length > 0) headers = applyHeaderMods(headers, target.requestMods);
  const outPath =
    target.rewritePath === undefined
      ? view.target
      : rewritePath(target.rewritePath, view.path, action.matchedPrefix) +
        (view.rawQuery === '' ? '' : `?${view.rawQuery}`);
  return { headers, hasBody, grpcTimeout, path: outPath };
}

/** The undici dispatch options that send `head` (with `body`) to an endpoint of a backend. */
export function upstreamDispatchOptions(
  head: UpstreamRequestHead,
  method: string | undefined,
  body: Dispatcher.DispatchOptions['body'],
  tls: BackendTls | undefined,
): Dispatcher.DispatchOptions {
  const options: Dispatcher.DispatchOptions = {
    path: head.path,
    method: method as Dispatcher.HttpMethod,
    headers: head.headers,
    body: body ?? null,
  };
  // BackendTLSPolicy: undici would take the SNI from the Host header (and reconnect when it changes).
  if (tls === undefined) return options;
  const sni = { servername: tls.serverName };
  return { ...options, ...sni };
}
