import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { closeNow, listen } from '../../net/listen.ts';
import { parseGoDurationMs } from './go-duration.ts';

export interface EchoIdentity {
  readonly namespace: string;
  readonly service: string;
  readonly pod: string;
  readonly cluster: string;
  readonly zone: string;
  readonly node?: string;
}

export interface EchoServerOptions {
  readonly host?: string;
  readonly port?: number;
  readonly identity: EchoIdentity;
}

export interface EchoServer {
  readonly port: number;
  close(): Promise<void>;
}

/** What the echo server answers: the request it saw and who it is (shape of the conformance echo-basic server). */
export interface EchoResponse {
  readonly path: string;
  readonly host: string;
  readonly method: string;
  readonly proto: string;
  readonly headers: Record<string, string[]>;
  readonly namespace: string;
  readonly service: string;
  readonly pod: string;
  readonly cluster: string;
  readonly zone: string;
  readonly node?: string;
  /** Bytes of request body received. */
  readonly bodyBytes: number;
}

/** Go's `http.CanonicalHeaderKey`: `x-forwarded-for` becomes `X-Forwarded-For`. */
export function canonicalHeaderName(name: string): string {
  let out = '';
  let upper = true;
  for (const ch of name) {
    out += upper ? ch.toUpperCase() : ch.toLowerCase();
    upper = ch === '-';
  }
  return out;
}

function describeHeaders(raw: readonly string[]): Record<string, string[]> {
  const headers: Record<string, string[]> = {};
  for (let i = 0; i < raw.length; i += 2) {
    const name = canonicalHeaderName(raw[i]!);
    // Go's server moves Host out of the header map into Request.Host; the echo server reports it as `host`.
    if (name === 'Host') continue;
    const list = headers[name];
    if (list === undefined) headers[name] = [raw[i + 1]!];
    else list.push(raw[i + 1]!);
  }
  return headers;
}

function applySetHeaders(res: ServerResponse, spec: string): void {
  for (const pair of spec.split(',')) {
    const colon = pair.indexOf(':');
    if (colon <= 0) continue;
    res.setHeader(pair.slice(0, colon).trim(), pair.slice(colon + 1).trim());
  }
}

function handle(identity: EchoIdentity, req: IncomingMessage, res: ServerResponse): void {
  let bodyBytes = 0;
  req.on('data', (chunk: Buffer) => {
    bodyBytes += chunk.length;
  });
  req.on('error', () => {});
  res.on('error', () => {});
  req.on('end', () => {
    const rawPath = req.url ?? '/';
    // A request target URL cannot parse (`//[::1`) is still echoed, never thrown out of the handler.
    const url = URL.canParse(rawPath, 'http://echo.invalid')
      ? new URL(rawPath, 'http://echo.invalid')
      : new URL('http://echo.invalid/');
    const delayText = url.searchParams.get('delay');
    const delayMs = delayText === null ? 0 : (parseGoDurationMs(delayText) ?? 0);
    const statusMatch = /^\/status\/(\d{3})$/.exec(url.pathname);
    const body: EchoResponse = {
      path: rawPath,
      host: req.headers.host ?? '',
      method: req.method ?? 'GET',
      proto: `HTTP/${req.httpVersion}`,
      headers: describeHeaders(req.rawHeaders),
      namespace: identity.namespace,
      service: identity.service,
      pod: identity.pod,
      cluster: identity.cluster,
      zone: identity.zone,
      ...(identity.node === undefined ? {} : { node: identity.node }),
      bodyBytes,
    };
    const respond = (): void => {
      if (res.destroyed) return;
      const setHeader = req.headers['x-echo-set-header'];
      if (typeof setHeader === 'string') applySetHeaders(res, setHeader);
      // Indented, so that `curl ... | grep pod` in the demo shows one field a line.
      const payload = JSON.stringify(body, null, 2);
      res.statusCode = statusMatch === null ? 200 : Number(statusMatch[1]);
      res.setHeader('Content-Type', 'application/json');
      res.setHeader('Content-Length', Buffer.byteLength(payload));
      res.end(payload);
    };
    if (delayMs > 0) setTimeout(respond, delayMs);
    else respond();
  });
}

/**
 * An HTTP backend for demos and tests that answers every request with JSON describing it, like the Gateway API
 * conformance echo-basic server, so a test can tell which backend (pod, cluster, zone) served a request.
 * `?delay=500ms` delays the answer, `X-Echo-Set-Header: Name:value,Name2:value2` sets response headers and
 * `/status/NNN` answers with that status code.
 */
export async function startEchoServer(options: EchoServerOptions): Promise<EchoServer> {
  const server = createServer((req, res) => handle(options.identity, req, res));
  server.on('clientError', (_err, socket) => socket.destroy());
  const port = await listen(server, options.host ?? '127.0.0.1', options.port ?? 0);
  return {
    port,
    close: () => closeNow(server),
  };
}
