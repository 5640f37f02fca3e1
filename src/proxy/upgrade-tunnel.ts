import { type ClientRequest, request as httpRequest, type IncomingMessage, STATUS_CODES } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { UpstreamEndpoint } from '../ir/route-table.ts';
import type { AttemptResult } from '../lb/balancer.ts';
import type { CompiledAction, ForwardTarget } from './compile-actions.ts';
import type { CompiledPort } from './compile-table.ts';
import type { ExchangeServices } from './forward-exchange.ts';
import { applyHeaderMods, HOP_BY_HOP } from './header-ops.ts';
import { matchRequest } from './match-request.ts';
import { pickTarget, redirectLocation } from './serve-request.ts';
import { upstreamTlsConnect } from './tls-upstream.ts';
import { buildUpstreamHead, type UpstreamRequestHead } from './upstream-request.ts';

const MAX_FAILOVERS = 4;
/** Time to the upstream's answer (101 or not) when the route sets no request timeout. */
const DEFAULT_UPGRADE_RESPONSE_TIMEOUT_MS = 60_000;

function writeRawReply(socket: Duplex, status: number, text: string, extra = ''): void {
  if (socket.destroyed) return;
  const body = `${text}\n`;
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\ncontent-type: text/plain; charset=utf-8\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n${extra}\r\n${body}`,
  );
}

/**
 * Serves an Upgrade request (WebSocket and the like): routes it like any request, then sends it upstream with
 * Node's HTTP client, which validates every header name and value as the normal path's client does. Only a
 * 101 answer turns the connection into a tunnel; any other answer is relayed as a plain response and the
 * connection is closed, so a client can never reach a backend unrouted. A connect failure moves to another
 * endpoint before anything reaches the client.
 */
export function serveUpgrade(
  port: CompiledPort,
  req: IncomingMessage,
  socket: Duplex,
  firstBytes: Buffer,
  services?: ExchangeServices,
  selectHost?: string,
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
  const tunnel: Tunnel = { services, action, target, client: socket, method: req.method ?? 'GET' };
  attempt(tunnel, head, firstBytes, startMs, undefined, 0);
}

interface Tunnel {
  readonly services: ExchangeServices | undefined;
  readonly action: CompiledAction;
  readonly target: ForwardTarget;
  readonly client: Duplex;
  readonly method: string;
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
    finish('success');
    tunnel.services?.rejections?.report('invalid upstream request', { err: (err as Error).message });
    writeRawReply(client, 500, 'invalid upstream request');
    record(500);
    return;
  }
  let connected = false;
  let answered = false;
  upstream.on('socket', (s: Socket) =>
    s.once(policy === undefined ? 'connect' : 'secureConnect', () => (connected = true)),
  );
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
    // Refused (or ignored) upgrade: an ordinary answer on a connection that then closes, never a tunnel.
    answered = true;
    client.off('close', onClientGone);
    const status = res.statusCode ?? 502;
    finish(status >= 500 ? 'http5xx' : 'success');
    record(status);
    if (client.destroyed) {
      res.destroy();
      return;
    }
    client.write(responseHead(status, res, tunnel.target, false));
    res.on('error', () => client.destroy());
    res.pipe(client);
    // The connection served this one answer; it is never reused (agent: false), so it is closed here.
    res.once('end', () => upstream.destroy());
    client.once('close', () => upstream.destroy());
  });
  upstream.end();
}

/**
 * The answer's head as the client gets it: hop-by-hop fields dropped (a 101 keeps Connection and Upgrade),
 * the route's response header modifiers applied; a refused upgrade's body is delimited by the close.
 */
function responseHead(status: number, res: IncomingMessage, target: ForwardTarget, upgrade: boolean): string {
  let headers: string[] = [];
  const raw = res.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    const lower = raw[i]!.toLowerCase();
    if (upgrade && (lower === 'connection' || lower === 'upgrade')) headers.push(raw[i]!, raw[i + 1]!);
    else if (!HOP_BY_HOP.has(lower) && lower !== 'content-length') headers.push(raw[i]!, raw[i + 1]!);
  }
  if (target.responseMods.length > 0) headers = applyHeaderMods(headers, target.responseMods);
  if (!upgrade) headers.push('connection', 'close');
  let out = `HTTP/1.1 ${status} ${res.statusMessage || STATUS_CODES[status] || ''}\r\n`;
  for (let i = 0; i < headers.length; i += 2) out += `${headers[i]}: ${headers[i + 1]}\r\n`;
  return `${out}\r\n`;
}
