import { type Endpoint, endpointKey } from './endpoints.ts';

/** What haproxy's one frontend speaks; the backend side follows (plain HTTP/1.1, h2c, or the raw TLS bytes). */
export type HaproxyFrontend =
  | { readonly kind: 'http' }
  /** Terminates TLS with `certificateFile` (certificate and key in one PEM) and proxies plain HTTP. */
  | { readonly kind: 'https'; readonly certificateFile: string }
  /** gRPC: HTTP/2 with prior knowledge on both sides. */
  | { readonly kind: 'grpc' }
  /** `mode tcp`: waits for the ClientHello and relays the connection untouched when its SNI is `serverName`. */
  | { readonly kind: 'tls-passthrough'; readonly serverName: string };

const HTTP: HaproxyFrontend = { kind: 'http' };

/** haproxy as a proxy on one thread, reusing idle upstream connections across clients. */
export function haproxyConfig(
  port: number,
  upstream: readonly Endpoint[],
  frontend: HaproxyFrontend = HTTP,
): string {
  const serverOptions = frontend.kind === 'grpc' ? ' proto h2' : '';
  const servers = upstream.map((e, i) => `  server s${i} ${endpointKey(e)}${serverOptions}`).join('\n');
  const head = `global
  nbthread 1
  maxconn 9000

defaults
  mode ${frontend.kind === 'tls-passthrough' ? 'tcp' : 'http'}
  timeout connect 5s
  timeout client 120s
  timeout server 120s
`;
  if (frontend.kind === 'tls-passthrough') {
    return `${head}
frontend bench
  bind 127.0.0.1:${port} backlog 4096
  tcp-request inspect-delay 5s
  tcp-request content accept if { req_ssl_hello_type 1 }
  use_backend upstream if { req_ssl_sni -i ${frontend.serverName} }

backend upstream
  balance roundrobin
${servers}
`;
  }
  const bind =
    frontend.kind === 'https'
      ? `bind 127.0.0.1:${port} backlog 4096 ssl crt ${frontend.certificateFile} alpn h2,http/1.1`
      : frontend.kind === 'grpc'
        ? `bind 127.0.0.1:${port} backlog 4096 proto h2`
        : `bind 127.0.0.1:${port} backlog 4096`;
  return `${head}  timeout http-keep-alive 120s
  http-reuse always

frontend bench
  ${bind}
  default_backend upstream

backend upstream
  balance roundrobin
${servers}
`;
}
