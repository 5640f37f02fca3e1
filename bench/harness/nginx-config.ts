import { type Endpoint, endpointKey } from './endpoints.ts';
import { WRK_REQUEST_ID_HEADER } from './wrk-request-id.ts';

/**
 * nginx configuration text for the roles nginx plays: the backend (`return 200`, static files, optionally
 * over HTTPS too) and the peer (HTTP reverse proxy, HTTPS termination, gRPC proxy, TLS passthrough by SNI
 * in the stream module). Everything lives in one temporary directory; nginx runs in the foreground.
 */
interface Common {
  readonly dir: string;
  readonly workers: number;
}

/** Certificate and key files for an `ssl` listen. */
export interface NginxTls {
  readonly certFile: string;
  readonly keyFile: string;
}

function mainContext(common: Common, preamble: string): string {
  const { dir, workers } = common;
  // Running as root, nginx would drop its workers to `nobody`, which cannot read a mkdtemp folder.
  const user = process.getuid?.() === 0 ? 'user root;\n' : '';
  return `${preamble}${user}daemon off;
worker_processes ${workers};
worker_rlimit_nofile 20000;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 16384; multi_accept on; }
`;
}

function sslLines(tls: NginxTls, indent: string): string {
  return [
    `ssl_certificate ${tls.certFile};`,
    `ssl_certificate_key ${tls.keyFile};`,
    'ssl_protocols TLSv1.2 TLSv1.3;',
    'ssl_session_cache shared:bench:10m;',
  ]
    .map((line) => `${indent}${line}`)
    .join('\n');
}

function frame(common: Common, http: string): string {
  const { dir } = common;
  return `${mainContext(common, '')}http {
  access_log off;
  client_body_temp_path ${dir}/client_body;
  proxy_temp_path ${dir}/proxy_temp;
  fastcgi_temp_path ${dir}/fastcgi_temp;
  uwsgi_temp_path ${dir}/uwsgi_temp;
  scgi_temp_path ${dir}/scgi_temp;
  keepalive_requests 10000000;
  keepalive_timeout 120s;
  client_max_body_size 0;
  sendfile on;
  tcp_nopush on;
  default_type application/octet-stream;
${http}
}
`;
}

export function nginxBackendConfig(
  common: Common,
  listens: readonly Endpoint[],
  smallBody: string,
  filesDir: string,
  /** Serve the same locations over HTTPS on this address too (the TLS rows' backend). */
  https?: { readonly endpoint: Endpoint; readonly tls: NginxTls },
): string {
  const [primary] = listens;
  const listenLines = [
    ...listens.map((e) => `    listen ${endpointKey(e)} backlog=4096;`),
    ...(https
      ? [`    listen ${endpointKey(https.endpoint)} ssl http2 backlog=4096;`, sslLines(https.tls, '    ')]
      : []),
  ].join('\n');
  const body = JSON.stringify(smallBody);
  // `return` answers before an upload has arrived (nginx discards the rest later), which HTTP allows but
  // which turns an upload benchmark into a test of early-response handling. Uploads therefore go through a
  // proxy_pass to this same server: nginx reads the whole body (in memory) first, then answers.
  return frame(
    common,
    `  upstream self {
    server ${primary ? endpointKey(primary) : '127.0.0.1:1'};
    keepalive 64;
  }
  server {
${listenLines}
    # wrk's per-request latency pairs each answer with its request by this id (bench/harness/wrk-load.ts);
    # without the request header nginx adds nothing.
    add_header ${WRK_REQUEST_ID_HEADER} $http_${WRK_REQUEST_ID_HEADER.toLowerCase().replaceAll('-', '_')};
    location /files/ { root ${filesDir}; }
    location = /upload {
      client_body_buffer_size 2m;
      proxy_pass http://self/uploaded;
      proxy_pass_request_body off;
      proxy_set_header Content-Length "";
      proxy_http_version 1.1;
      proxy_set_header Connection "";
    }
    location = /uploaded { default_type text/plain; return 200 ${body}; }
    location / { default_type text/plain; return 200 ${body}; }
  }`,
  );
}

/**
 * The HTTP reverse proxy; with `tls`, it terminates HTTPS on the listen port (HTTP/2 or HTTP/1.1 by ALPN, as the
 * gateway's HTTPS listener) and proxies plain HTTP.
 */
export function nginxProxyConfig(
  common: Common,
  port: number,
  upstream: readonly Endpoint[],
  tls?: NginxTls,
): string {
  const servers = upstream.map((e) => `    server ${endpointKey(e)};`).join('\n');
  const listen = tls
    ? `    listen 127.0.0.1:${port} ssl http2 backlog=4096;\n${sslLines(tls, '    ')}`
    : `    listen 127.0.0.1:${port} backlog=4096;`;
  return frame(
    common,
    `  upstream backend {
${servers}
    keepalive 512;
    keepalive_requests 10000000;
    keepalive_timeout 120s;
  }
  server {
${listen}
    location / {
      proxy_pass http://backend;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $http_host;
      # Stream bodies both ways, as the Node proxies do: no disk spooling of uploads or downloads.
      proxy_request_buffering off;
      proxy_max_temp_file_size 0;
    }
  }`,
  );
}

/** gRPC over h2c in (prior knowledge on an `http2` listen) and out (`grpc_pass` with upstream keep-alive). */
export function nginxGrpcProxyConfig(common: Common, port: number, upstream: readonly Endpoint[]): string {
  const servers = upstream.map((e) => `    server ${endpointKey(e)};`).join('\n');
  return frame(
    common,
    `  upstream grpc_backend {
${servers}
    keepalive 64;
    keepalive_requests 10000000;
    keepalive_timeout 120s;
  }
  server {
    listen 127.0.0.1:${port} http2 backlog=4096;
    http2_max_concurrent_streams 1000;
    http2_max_requests 10000000;
    location / {
      grpc_pass grpc://grpc_backend;
    }
  }`,
  );
}

/**
 * TLS passthrough: the stream module reads the ClientHello's SNI (`ssl_preread`) and relays the connection
 * untouched to the upstream for that name; other names go nowhere. `loadModule` is the path of
 * ngx_stream_module.so where the module is dynamic (Debian), undefined where it is built in.
 */
export function nginxTlsPassthroughConfig(
  common: Common,
  port: number,
  upstream: readonly Endpoint[],
  serverName: string,
  loadModule: string | undefined,
): string {
  const servers = upstream.map((e) => `    server ${endpointKey(e)};`).join('\n');
  return `${mainContext(common, loadModule ? `load_module ${loadModule};\n` : '')}stream {
  upstream tls_backend {
${servers}
  }
  map $ssl_preread_server_name $tls_upstream {
    ${serverName} tls_backend;
    default 127.0.0.1:1;
  }
  server {
    listen 127.0.0.1:${port} backlog=4096;
    ssl_preread on;
    proxy_pass $tls_upstream;
  }
}
`;
}
