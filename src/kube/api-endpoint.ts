import { createHash } from 'node:crypto';
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { type AgentOptions, Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Duplex } from 'node:stream';
import { connect as tlsConnect } from 'node:tls';

/**
 * What a request to one API server carries: its TLS settings and credentials. Asked again for every request,
 * so that rotating credentials (an exec plugin's token, a projected service account token) are followed.
 */
export interface ApiCredentials {
  readonly headers?: Readonly<Record<string, string>>;
  /** PEM: the server's CA, a client certificate and its key. */
  readonly ca?: string | Buffer;
  readonly cert?: string | Buffer;
  readonly key?: string | Buffer;
  readonly insecureSkipTlsVerify?: boolean;
  readonly tlsServerName?: string;
}

/** One API server: where it is, and what to send it. */
export interface ApiEndpoint {
  /** `https://host:port` (a path prefix is kept), or `http://` for a server without TLS. */
  readonly server: string;
  /** An HTTP proxy to tunnel through (CONNECT), as a kubeconfig's `proxy-url`. */
  readonly proxyUrl?: string;
  credentials(): Promise<ApiCredentials>;
}

export interface ApiExchange {
  readonly method: string;
  /** Path and query, appended to the server's URL. */
  readonly path: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
  readonly signal?: AbortSignal;
}

/**
 * One request to an API server over node:http(s), keep-alive, one agent per distinct TLS setting. The response
 * is handed over as it arrives (watches stream); the caller reads or drops it.
 */
export async function sendToApiServer(
  endpoint: ApiEndpoint,
  exchange: ApiExchange,
): Promise<IncomingMessage> {
  const credentials = await endpoint.credentials();
  const url = new URL(endpoint.server.replace(/\/+$/, '') + exchange.path);
  const secure = url.protocol === 'https:';
  const headers: Record<string, string> = { ...credentials.headers, ...exchange.headers };
  if (exchange.body !== undefined) headers['content-length'] = String(Buffer.byteLength(exchange.body));
  const options = {
    method: exchange.method,
    hostname: url.hostname.replace(/^\[|\]$/g, ''),
    port: url.port || (secure ? 443 : 80),
    path: `${url.pathname}${url.search}`,
    headers,
    agent: agentFor(endpoint, credentials, secure),
  };
  const signal = exchange.signal;
  signal?.throwIfAborted();
  return new Promise<IncomingMessage>((resolve, reject) => {
    const req = (secure ? httpsRequest : httpRequest)(options, resolve);
    // Not http.request's own `signal`: that destroys the socket with an AbortError nobody listens for once the
    // response is being read. Destroyed without an error, the request rejects before a response and the
    // response ends (or errs, for its reader) after one.
    const abort = (): void => {
      req.destroy();
    };
    signal?.addEventListener('abort', abort, { once: true });
    req.once('close', () => signal?.removeEventListener('abort', abort));
    req.on('error', (err) => reject(signal?.aborted ? (signal.reason ?? err) : err));
    req.end(exchange.body);
  });
}

const agents = new Map<string, HttpAgent>();

function agentFor(endpoint: ApiEndpoint, credentials: ApiCredentials, secure: boolean): HttpAgent {
  const tls: AgentOptions = {
    keepAlive: true,
    ...(credentials.ca ? { ca: credentials.ca } : {}),
    ...(credentials.cert ? { cert: credentials.cert } : {}),
    ...(credentials.key ? { key: credentials.key } : {}),
    rejectUnauthorized: credentials.insecureSkipTlsVerify !== true,
    ...(credentials.tlsServerName ? { servername: credentials.tlsServerName } : {}),
  };
  // Keyed by a digest, never by the key material itself.
  const key = createHash('sha256')
    .update(
      JSON.stringify([
        endpoint.server,
        endpoint.proxyUrl ?? '',
        secure,
        String(tls.ca ?? ''),
        String(tls.cert ?? ''),
        String(tls.key ?? ''),
        tls.rejectUnauthorized,
        tls.servername ?? '',
      ]),
    )
    .digest('hex');
  let agent = agents.get(key);
  if (agent === undefined) {
    agent = secure ? new HttpsAgent(tls) : new HttpAgent({ keepAlive: true });
    if (endpoint.proxyUrl !== undefined) tunnelThrough(agent, endpoint.proxyUrl, tls, secure);
    // An agent per credential: a rotated client certificate leaves the old one idle, and idle sockets close.
    if (agents.size > 64) {
      const oldest = agents.keys().next().value as string;
      agents.get(oldest)?.destroy();
      agents.delete(oldest);
    }
    agents.set(key, agent);
  }
  return agent;
}

/** Connections through an HTTP proxy: CONNECT host:port, then TLS (or plain HTTP) over the tunnel. */
function tunnelThrough(agent: HttpAgent, proxyUrl: string, tls: AgentOptions, secure: boolean): void {
  const proxy = new URL(proxyUrl);
  const create = (
    options: {
      host?: string | null;
      hostname?: string | null;
      port?: number | string | null;
      servername?: string;
    },
    callback: (err: Error | null, stream?: Duplex) => void,
  ): undefined => {
    const host = options.hostname ?? options.host ?? 'localhost';
    const target = `${host.includes(':') ? `[${host}]` : host}:${options.port}`;
    const auth = proxy.username
      ? {
          'proxy-authorization': `Basic ${Buffer.from(`${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`).toString('base64')}`,
        }
      : {};
    const connectRequest = httpRequest({
      hostname: proxy.hostname,
      port: proxy.port || 80,
      method: 'CONNECT',
      path: target,
      headers: { host: target, ...auth },
    });
    connectRequest.once('connect', (res, socket) => {
      if (res.statusCode !== 200) {
        socket.destroy();
        callback(new Error(`proxy ${proxy.host} refused CONNECT ${target}: ${res.statusCode}`));
        return;
      }
      if (!secure) {
        callback(null, socket);
        return;
      }
      const tlsSocket = tlsConnect({ ...tls, socket, servername: tls.servername ?? host });
      tlsSocket.once('secureConnect', () => callback(null, tlsSocket));
      tlsSocket.once('error', (err) => callback(err));
    });
    connectRequest.once('error', (err) => callback(err));
    connectRequest.end();
    return undefined;
  };
  (agent as unknown as { createConnection: typeof create }).createConnection = create;
}

/** The whole body of a response, as text. */
export async function readBody(response: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of response) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
