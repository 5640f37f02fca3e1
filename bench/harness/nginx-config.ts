import { type Endpoint, endpointKey } from './endpoints.ts';

/**
 * nginx configuration text for the two roles nginx plays: the backend (`return 200`, static files) and the
 * reverse-proxy peer. Everything lives in one temporary directory; nginx runs in the foreground.
 */
interface Common {
  readonly dir: string;
  readonly workers: number;
}

function frame(common: Common, http: string): string {
  const { dir, workers } = common;
  // Running as root, nginx would drop its workers to `nobody`, which cannot read a mkdtemp folder.
  const user = process.getuid?.() === 0 ? 'user root;\n' : '';
  return `${user}daemon off;
worker_processes ${workers};
worker_rlimit_nofile 20000;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 16384; multi_accept on; }
http {
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
): string {
  const [primary] = listens;
  const listenLines = listens.map((e) => `    listen ${endpointKey(e)} backlog=4096;`).join('\n');
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

export function nginxProxyConfig(common: Common, port: number, upstream: readonly Endpoint[]): string {
  const servers = upstream.map((e) => `    server ${endpointKey(e)};`).join('\n');
  return frame(
    common,
    `  upstream backend {
${servers}
    keepalive 512;
    keepalive_requests 10000000;
    keepalive_timeout 120s;
  }
  server {
    listen 127.0.0.1:${port} backlog=4096;
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
