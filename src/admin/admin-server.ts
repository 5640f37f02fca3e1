import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { closeNow, listen } from '../net/listen.ts';

/** What the admin server reads; it never writes anything back (DESIGN.md §1). */
export interface AdminState {
  /** Ready after the first translation has been applied and the listeners are up. */
  readiness(): { readonly ready: boolean; readonly reasons: readonly string[] };
  /** The routing table, statuses and source problems, as /config_dump serves them. */
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

export async function startAdminServer(options: AdminServerOptions): Promise<AdminServer> {
  const { registry, state, logger } = options;
  const routes = new Map<string, AdminRoute>([
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
    [
      '/config_dump',
      (_req, res) => send(res, 200, `${JSON.stringify(state.configDump(), null, 2)}\n`, 'application/json'),
    ],
    ...(options.extraRoutes ?? []),
  ]);

  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://admin');
    const route = routes.get(url.pathname);
    if (!route) {
      send(res, 404, `no admin endpoint ${url.pathname}; try ${[...routes.keys()].join(', ')}\n`);
      return;
    }
    Promise.resolve(route(req, res, url)).catch((error: unknown) => {
      logger.error({ err: error, path: url.pathname }, 'admin endpoint failed');
      if (!res.headersSent) send(res, 500, 'internal error\n');
      else res.destroy();
    });
  });
  const port = await listen(server, options.host, options.port);
  logger.info({ component: 'admin', port }, 'admin server listening');
  return {
    port,
    close: () => closeNow(server),
  };
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
