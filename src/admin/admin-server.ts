import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { closeNow, listen } from '../net/listen.ts';

/**
 * What the admin server reads; it never writes anything back, so an admin request cannot change what the data
 * plane serves (docs/ARCHITECTURE.md).
 */
export interface AdminState {
  /** Ready after the first translation has been applied and the listeners are up. */
  readiness(): { readonly ready: boolean; readonly reasons: readonly string[] };
  /** The routing table, statuses and source problems, as /config_dump serves them. */
  /** Asynchronous with `--workers` (the balancers come from a worker). */
  configDump(): unknown;
}

export type AdminRoute = (req: IncomingMessage, res: ServerResponse, url: URL) => void | Promise<void>;

export interface AdminServerOptions {
  readonly host: string;
  readonly port: number;
  readonly registry: Registry;
  /** More Prometheus text appended to the registry's (the workers' metrics in --workers mode). */
  readonly extraMetrics?: () => Promise<string>;
  readonly state: AdminState;
  readonly logger: Logger;
  /** Extra routes by path, e.g. the demo's controls. */
  readonly extraRoutes?: ReadonlyMap<string, AdminRoute>;
}

export interface AdminServer {
  readonly port: number;
  close(): Promise<void>;
}

/** The routes safe to expose to a cluster (Prometheus, probes): nothing in them reveals configuration. */
export function publicRoutes(
  options: Pick<AdminServerOptions, 'registry' | 'extraMetrics' | 'state'>,
): Map<string, AdminRoute> {
  const { registry, state } = options;
  return new Map<string, AdminRoute>([
    ['/healthz', (_req, res) => send(res, 200, 'ok\n')],
    [
      '/readyz',
      (_req, res) => {
        const { ready, reasons } = state.readiness();
        send(res, ready ? 200 : 503, ready ? 'ready\n' : `not ready: ${reasons.join('; ')}\n`);
      },
    ],
    [
      '/metrics',
      async (_req, res) => {
        const own = await registry.metrics();
        const extra = options.extraMetrics ? await options.extraMetrics() : '';
        send(res, 200, extra ? `${own}\n${extra}` : own, registry.contentType);
      },
    ],
  ]);
}

/**
 * The admin server: the public routes plus /config_dump and any extra routes. It binds 127.0.0.1 unless
 * `--admin-address` says otherwise, because /config_dump shows the whole configuration.
 */
export async function startAdminServer(options: AdminServerOptions): Promise<AdminServer> {
  const routes = publicRoutes(options);
  routes.set('/config_dump', async (_req, res) =>
    send(res, 200, `${JSON.stringify(await options.state.configDump(), null, 2)}\n`, 'application/json'),
  );
  for (const [path, route] of options.extraRoutes ?? []) routes.set(path, route);
  return serveRoutes(routes, options.host, options.port, 'admin', options.logger);
}

/** /metrics, /healthz and /readyz on their own address and port (`--metrics-address`, `--metrics-port`). */
export function startMetricsServer(
  options: Pick<AdminServerOptions, 'host' | 'port' | 'registry' | 'extraMetrics' | 'state' | 'logger'>,
): Promise<AdminServer> {
  return serveRoutes(publicRoutes(options), options.host, options.port, 'metrics', options.logger);
}

async function serveRoutes(
  routes: ReadonlyMap<string, AdminRoute>,
  host: string,
  port: number,
  component: string,
  logger: Logger,
): Promise<AdminServer> {
  const server: Server = createServer((req, res) => {
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://admin');
    } catch {
      send(res, 400, 'bad request\n');
      return;
    }
    const route = routes.get(url.pathname);
    if (!route) {
      send(res, 404, `no ${component} endpoint ${url.pathname}; try ${[...routes.keys()].join(', ')}\n`);
      return;
    }
    Promise.resolve(route(req, res, url)).catch((error: unknown) => {
      logger.error({ err: error, path: url.pathname }, `${component} endpoint failed`);
      if (!res.headersSent) send(res, 500, 'internal error\n');
      else res.destroy();
    });
  });
  // Bad requests to the admin port are answered like the listeners' (never a crash).
  server.on('clientError', (_err, socket) => socket.destroy());
  const bound = await listen(server, host, port);
  logger.info({ component, address: host, port: bound }, `${component} server listening`);
  return { port: bound, close: () => closeNow(server) };
}

function send(
  res: ServerResponse,
  status: number,
  body: string,
  contentType = 'text/plain; charset=utf-8',
): void {
  res.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}
