import { type IncomingMessage, STATUS_CODES } from 'node:http';
import { connect, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { connect as tlsConnect } from 'node:tls';
import type { UpstreamEndpoint } from '../ir/route-table.ts';
import type { CompiledBackend, CompiledPort, ForwardTarget } from './compile-table.ts';
import { matchRequest } from './match-request.ts';
import { pickTarget, redirectLocation } from './serve-request.ts';
import { upstreamTlsConnect } from './tls-upstream.ts';
import { buildUpstreamHead, type UpstreamRequestHead } from './upstream-request.ts';

const MAX_FAILOVERS = 4;

function writeRawReply(socket: Duplex, status: number, text: string, extra = ''): void {
  if (socket.destroyed) return;
  const body = `${text}\n`;
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\ncontent-type: text/plain; charset=utf-8\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n${extra}\r\n${body}`,
  );
}

function serialiseHead(method: string, head: UpstreamRequestHead): string {
  let out = `${method} ${head.path} HTTP/1.1\r\n`;
  const h = head.headers;
  for (let i = 0; i < h.length; i += 2) out += `${h[i]}: ${h[i + 1]!.replace(/[\r\n]/g, ' ')}\r\n`;
  return `${out}\r\n`;
}

/**
 * Serves an Upgrade request (WebSocket and the like): routes it like any request, then opens a TCP
 * connection to the chosen endpoint, replays the request head and splices the two sockets together. The
 * upstream's 101 (or refusal) reaches the client as the upstream wrote it. A connect failure moves to
 * another endpoint before anything reaches the client.
 */
export function serveUpgrade(
  port: CompiledPort,
  req: IncomingMessage,
  socket: Duplex,
  firstBytes: Buffer,
): void {
  socket.on('error', () => socket.destroy());
  const startMs = performance.now();
  const view = matchRequest(port, req);
  const action = view.action;
  if (action === undefined) {
    writeRawReply(socket, view.status, view.status === 400 ? 'bad request' : 'no route');
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
  const request = serialiseHead(req.method ?? 'GET', head);
  tunnel(target, target.backend, socket, request, firstBytes, startMs, undefined, 0);
}

function tunnel(
  target: ForwardTarget,
  backend: CompiledBackend,
  client: Duplex,
  request: string,
  firstBytes: Buffer,
  startMs: number,
  tried: Set<string> | undefined,
  failovers: number,
): void {
  const endpoint: UpstreamEndpoint | undefined = backend.balancer.pick(tried);
  if (endpoint === undefined || failovers > MAX_FAILOVERS) {
    const status = tried === undefined ? 503 : 502;
    writeRawReply(client, status, status === 503 ? 'no healthy upstream' : 'upstream connect error');
    target.series.record(status, (performance.now() - startMs) / 1000);
    return;
  }
  const end = backend.balancer.begin(endpoint);
  const attemptStart = performance.now();
  let connected = false;
  let ended = false;
  const finish = (result: 'success' | 'connect-failure' | 'reset'): void => {
    if (ended) return;
    ended = true;
    const latencyMs = performance.now() - attemptStart;
    end({ result, latencyMs });
    backend.upstreamSeries(endpoint).record(result, latencyMs / 1000);
  };
  // BackendTLSPolicy: the tunnel is TLS too, verified as for requests (never plain text).
  const policy = backend.cluster.tls;
  const upstream: Socket =
    policy === undefined
      ? connect({ host: endpoint.address, port: endpoint.port })
      : tlsConnect({ host: endpoint.address, port: endpoint.port, ...upstreamTlsConnect(policy) });
  const onClientGone = (): void => {
    if (!connected) {
      finish('success');
      upstream.destroy();
    }
  };
  client.once('close', onClientGone);
  upstream.on('error', () => {
    if (!connected) {
      finish('connect-failure');
      client.off('close', onClientGone);
      if (client.destroyed) return;
      const next = tried ?? new Set<string>();
      next.add(endpoint.key);
      tunnel(target, backend, client, request, firstBytes, startMs, next, failovers + 1);
      return;
    }
    finish('reset');
    client.destroy();
  });
  upstream.once(policy === undefined ? 'connect' : 'secureConnect', () => {
    connected = true;
    client.off('close', onClientGone);
    upstream.setNoDelay(true);
    upstream.write(request);
    if (firstBytes.length > 0) upstream.write(firstBytes);
    upstream.pipe(client);
    client.pipe(upstream);
    client.once('close', () => upstream.destroy());
    upstream.once('close', () => {
      finish('success');
      client.destroy();
      target.series.record(101, (performance.now() - startMs) / 1000);
    });
  });
}
