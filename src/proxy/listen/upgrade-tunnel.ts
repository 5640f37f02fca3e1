import { type ClientRequest, request as httpRequest, type IncomingMessage, STATUS_CODES } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { UpstreamEndpoint } from '../../ir/route-table.ts';
import type { AttemptResult } from '../../lb/balancer.ts';
import type { CompiledAction, ForwardTarget } from '../compile/compile-actions.ts';
import type { CompiledPort } from '../compile/compile-table.ts';
import { applyHeaderMods, HOP_BY_HOP } from '../compile/header-ops.ts';
import type { ExchangeServices } from '../exchange/forward-exchange.ts';
import { matchRequest } from '../exchange/match-request.ts';
import { pickTarget, redirectLocation } from '../exchange/serve-request.ts';
import { buildUpstreamHead, type UpstreamRequestHead } from '../exchange/upstream-request.ts';
import { upstreamTlsConnect } from '../upstream/tls-upstream.ts';

const MAX_FAILOVERS = 4;
/** Time to the upstream's answer (101 or not) when the route sets no request timeout. */
const DEFAULT_UPGRADE_RESPONSE_TIMEOUT_MS = 60_000;
/** `--tunnel-idle-timeout-ms`: an upgraded connection idle this long either way is closed. */
const DEFAULT_TUNNEL_IDLE_TIMEOUT_MS = 3_600_000;

function writeRawReply(socket: Duplex, status: number, text: string, extra = ''): void {
  if (socket.destroyed) return;
  const body = `${text}\n`;
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\ncontent-type: text/plain; charset=utf-8\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n${extra}\r\n${body}`,
  );
}

/**
 * Hands a connection whose upgrade was refused back to the listener's HTTP/1 server, with the bytes read past
 * the request (`head`, the start of the next request) put back: its next request is parsed and routed as any.
 */
export type ResumeHttp1 = (socket: Duplex, head: Buffer) => void;

/**
 * Serves an Upgrade request (WebSocket and the like): routes it like any request, then sends it upstream with
 * Node's HTTP client, which validates every header name and value as the normal path's client does. Only a
 * 101 answer turns the connection into a tunnel; any other answer is relayed as a plain response, so a client
 * can never reach a backend unrouted. After it the connection serves the client's next request through
 * `resume` (as nginx and Envoy do) when the exchange allows it: no request body left unread, a response body
 * with a known length, neither side asking to close; otherwise it closes. A connect failure moves to another
 * endpoint before anything reaches the client.
 */
export function serveUpgrade(
  port: CompiledPort,
  req: IncomingMessage,
  socket: Duplex,
  firstBytes: Buffer,
  services?: ExchangeServices,
  selectHost?: string,
  resume?: ResumeHttp1,
): void {
  socket.on('error', () => socket.destroy());
  const startMs = performance.now();
  const view = matchRequest(port, req, selectHost, services?.paths);
  const action = view.action;
  if (action === undefined) {
    if (view.location !== undefined) {
      writeRawReply(socket, view.status, String(view.status), `location: ${view.location}\r\n`);
    } else {
      const text = view.status === 400 ? view.reason || 'bad request' : 'no route';
      writeRawReply(socket, view.status, text);
    }
    return;
  }
  const target = pickTarget(action);
  const redirect = action.redirect ?? target?.redirect;
  if (redirect !== undefined) {
    const location = redirectLocation(view, action, redirect);
    writeRawReply(socket, redirect.statusCode, String(redirect.statusCode), `location: ${location}\r\n`);
    return;
  }
  if (target?.backend === undefined) {
    writeRawReply(socket, 500, 'invalid backend');
    (target?.series ?? action.localSeries).record(500, (performance.now() - startMs) / 1000);
    return;
  }
  const head = buildUpstreamHead(req, view, action, target, true);
  const tunnel: Tunnel = {
    services,
    action,
    target,
    client: socket,
    method: req.method ?? 'GET',
    resume: resume !== undefined && clientAllowsReuse(req) ? resume : undefined,
  };
  attempt(tunnel, head, firstBytes, startMs, undefined, 0);
}

interface Tunnel {
  readonly services: ExchangeServices | undefined;
  readonly action: CompiledAction;
  readonly target: ForwardTarget;
  readonly client: Duplex;
  readonly method: string;
  /** Set when the client's side of the exchange lets its connection carry another request. */
  readonly resume: ResumeHttp1 | undefined;
}

/**
 * Whether the connection may carry another request once a refused upgrade is answered: HTTP/1.1 without
 * `Connection: close`, and no request body (its bytes are no longer framed by the parser: left unread, they
 * would be read as the next request).
 */
function clientAllowsReuse(req: IncomingMessage): boolean {
  if (req.httpVersionMajor !== 1 || req.httpVersionMinor !== 1) return false;
  if (hasToken(req.headers.connection, 'close')) return false;
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] === undefined && (length === undefined || length === '0');
}

function hasToken(value: string | undefined, token: string): boolean {
  return value?.split(',').some((t) => t.trim().toLowerCase() === token) === true;
}

/** How a refused upgrade's answer is delimited toward the client. */
type Framing = 'none' | 'length' | 'chunked' | 'close';

function responseFraming(method: string, res: IncomingMessage): Framing {
  const status = res.statusCode ?? 0;
  if (method === 'HEAD' || status === 204 || status === 304 || (status >= 100 && status < 200)) return 'none';
  if (res.headers['transfer-encoding'] !== undefined) return 'chunked';
  if (res.headers['content-length'] !== undefined) return 'length';
  return 'close';
}

function attempt(
  tunnel: Tunnel,
  head: UpstreamRequestHead,
  firstBytes: Buffer,
  startMs: number,
  tried: Set<string> | undefined,
  failovers: number,
): void {
  const { target, client } = tunnel;
  const backend = target.backend!;
  const record = (status: number): void => target.series.record(status, (performance.now() - startMs) / 1000);
  const endpoint: UpstreamEndpoint | undefined = backend.balancer.pick(tried);
  if (endpoint === undefined || failovers > MAX_FAILOVERS) {
    const status = tried === undefined ? 503 : 502;
    writeRawReply(client, status, status === 503 ? 'no healthy upstream' : 'upstream connect error');
    record(status);
    return;
  }
  // A tunnel holds one of the endpoint's connection slots for its whole life, as a request does for its own.
  const pools = tunnel.services?.pools;
  const slot = pools?.reserve(endpoint);
  if (pools !== undefined && slot === undefined) {
    tunnel.services?.rejections?.report('upstream connection limit', { endpoint: endpoint.key });
    writeRawReply(client, 503, 'upstream connection limit reached');
    record(503);
    return;
  }
  let released = false;
  const release = (): void => {
    if (released) return;
    released = true;
    if (slot !== undefined) pools?.release(slot);
  };
  const end = backend.balancer.begin(endpoint);
  const attemptStart = performance.now();
  let ended = false;
  const finish = (result: AttemptResult): void => {
    if (ended) return;
    ended = true;
    const latencyMs = performance.now() - attemptStart;
    end({ result, latencyMs });
    backend.upstreamSeries(endpoint).record(result, latencyMs / 1000);
  };
  // BackendTLSPolicy: the tunnel is TLS too, verified as for requests (never plain text).
  const policy = backend.cluster.tls;
  let upstream: ClientRequest;
  try {
    const options = {
      host: endpoint.address,
      port: endpoint.port,
      method: tunnel.method,
      path: head.path,
      headers: head.headers,
      agent: false as const,
      setHost: false,
    };
    upstream =
      policy === undefined
        ? httpRequest(options)
        : httpsRequest({ ...options, ...upstreamTlsConnect(policy) });
  } catch (err) {
    // The client refused a header or path we built: the gateway's error, never the endpoint's.
    release();
    finish('success');
    tunnel.services?.rejections?.report('invalid upstream request', { err: (err as Error).message });
    writeRawReply(client, 500, 'invalid upstream request');
    record(500);
    return;
  }
  let connected = false;
  let answered = false;
  let socketSeen = false;
  // The slot is the upstream connection's: it is given back when that socket closes (a tunnel's end, a relayed
  // refusal, a failed connect), or with the request when it never got a socket.
  upstream.on('socket', (s: Socket) => {
    socketSeen = true;
    s.once('close', release);
    s.once(policy === undefined ? 'connect' : 'secureConnect', () => (connected = true));
  });
  upstream.once('close', () => {
    if (!socketSeen) release();
  });
  upstream.setTimeout(tunnel.action.requestTimeoutMs ?? DEFAULT_UPGRADE_RESPONSE_TIMEOUT_MS, () => {
    if (answered) return;
    finish('timeout');
    upstream.destroy();
    writeRawReply(client, 504, 'upstream request timeout');
    record(504);
  });
  const onClientGone = (): void => {
    if (answered) return;
    finish('success');
    upstream.destroy();
  };
  client.once('close', onClientGone);
  upstream.on('error', () => {
    if (answered || ended) return;
    client.off('close', onClientGone);
    if (!connected) {
      finish('connect-failure');
      if (client.destroyed) return;
      const next = tried ?? new Set<string>();
      next.add(endpoint.key);
      attempt(tunnel, head, firstBytes, startMs, next, failovers + 1);
      return;
    }
    finish('reset');
    writeRawReply(client, 502, 'upstream connect error or disconnect/reset');
    record(502);
  });
  upstream.on('upgrade', (res: IncomingMessage, upSocket: Socket, upHead: Buffer) => {
    answered = true;
    client.off('close', onClientGone);
    if (client.destroyed) {
      finish('success');
      upSocket.destroy();
      return;
    }
    upSocket.setNoDelay(true);
    upSocket.setTimeout(0);
    // Every byte either way passes the client socket (read or written): its idle timer is the tunnel's.
    const idleMs = tunnel.services?.tunnelIdleTimeoutMs ?? DEFAULT_TUNNEL_IDLE_TIMEOUT_MS;
    const clientSocket = client as Socket;
    clientSocket.setTimeout?.(idleMs);
    clientSocket.once?.('timeout', () => {
      upSocket.destroy();
      client.destroy();
    });
    upSocket.on('error', () => {
      finish('reset');
      client.destroy();
    });
    client.write(responseHead(101, res, tunnel.target, true));
    if (upHead.length > 0) client.write(upHead);
    if (firstBytes.length > 0) upSocket.write(firstBytes);
    upSocket.pipe(client);
    client.pipe(upSocket);
    client.once('close', () => upSocket.destroy());
    upSocket.once('close', () => {
      finish('success');
      client.destroy();
      record(101);
    });
  });
  upstream.on('response', (res: IncomingMessage) => {
    // Refused (or ignored) upgrade: an ordinary answer, never a tunnel.
    answered = true;
    client.off('close', onClientGone);
    const status = res.statusCode ?? 502;
    finish(status >= 500 ? 'http5xx' : 'success');
    record(status);
    if (client.destroyed) {
      res.destroy();
      return;
    }
    let framing = responseFraming(tunnel.method, res);
    if (tunnel.resume === undefined || hasToken(res.headers.connection, 'close')) {
      framing = framing === 'none' ? 'none' : 'close';
    }
    const keep =
      tunnel.resume !== undefined && framing !== 'close' && !hasToken(res.headers.connection, 'close');
    client.write(responseHead(status, res, tunnel.target, false, framing, keep));
    res.on('error', () => client.destroy());
    client.once('close', () => upstream.destroy());
    if (framing === 'chunked') {
      res.on('data', (chunk: Buffer) => {
        if (chunk.length === 0) return;
        client.write(`${chunk.length.toString(16)}\r\n`);
        client.write(chunk);
        client.write('\r\n');
      });
    } else {
      res.pipe(client, { end: false });
    }
    res.once('end', () => {
      // The upstream connection served this one answer (agent: false): it is never reused.
      upstream.destroy();
      if (client.destroyed) return;
      if (framing === 'chunked') client.write('0\r\n\r\n');
      if (keep) tunnel.resume!(client, firstBytes);
      else client.end();
    });
  });
  upstream.end();
}

/**
 * The answer's head as the client gets it: hop-by-hop fields dropped (a 101 keeps Connection and Upgrade),
 * the route's response header modifiers applied, and the framing the relay uses: the backend's length, a
 * chunked body re-chunked, or the close (then `Connection: close`).
 */
function responseHead(
  status: number,
  res: IncomingMessage,
  target: ForwardTarget,
  upgrade: boolean,
  framing: Framing = 'close',
  keep = false,
): string {
  let headers: string[] = [];
  const raw = res.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    const lower = raw[i]!.toLowerCase();
    if (upgrade && (lower === 'connection' || lower === 'upgrade')) headers.push(raw[i]!, raw[i + 1]!);
    else if (!HOP_BY_HOP.has(lower) && lower !== 'content-length') headers.push(raw[i]!, raw[i + 1]!);
  }
  if (target.responseMods.length > 0) headers = applyHeaderMods(headers, target.responseMods);
  if (!upgrade) {
    const length = res.headers['content-length'];
    if ((framing === 'length' || framing === 'none') && length !== undefined)
      headers.push('content-length', length);
    if (framing === 'chunked') headers.push('transfer-encoding', 'chunked');
    if (!keep) headers.push('connection', 'close');
  }
  let out = `HTTP/1.1 ${status} ${res.statusMessage || STATUS_CODES[status] || ''}\r\n`;
  for (let i = 0; i < headers.length; i += 2) out += `${headers[i]}: ${headers[i + 1]}\r\n`;
  return `${out}\r\n`;
}
