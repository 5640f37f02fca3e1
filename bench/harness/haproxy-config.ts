import { type Endpoint, endpointKey } from './endpoints.ts';

/** haproxy as a reverse proxy on one thread, reusing idle upstream connections across clients. */
export function haproxyConfig(port: number, upstream: readonly Endpoint[]): string {
  const servers = upstream.map((e, i) => `  server s${i} ${endpointKey(e)}`).join('\n');
  return `global
  nbthread 1
  maxconn 9000

defaults
  mode http
  timeout connect 5s
  timeout client 120s
  timeout server 120s
  timeout http-keep-alive 120s
  http-reuse always

frontend bench
  bind 127.0.0.1:${port} backlog 4096
  default_backend upstream

backend upstream
  balance roundrobin
${servers}
`;
}
