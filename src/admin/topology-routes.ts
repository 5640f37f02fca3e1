import { existsSync, readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { join } from 'node:path';
import type { RouteTable } from '../ir/route-table.ts';
import type { AdminRoute } from './admin-server.ts';
import { lookupRoute } from './topology-listeners.ts';
import type { TopologyService } from './topology-service.ts';

/**
 * The page's files: plain HTML, CSS and JavaScript committed in src/admin/ui, no build step, no CDN. tsc does
 * not emit them, so compiled code (dist/admin) looks beside itself (the image copies them there), then in the
 * checkout's src/admin/ui.
 */
const UI_DIRS = [join(import.meta.dirname, 'ui'), join(import.meta.dirname, '../../src/admin/ui')];
const UI_FILES = [
  ['index.html', 'text/html; charset=utf-8'],
  ['app.js', 'text/javascript; charset=utf-8'],
  ['app.css', 'text/css; charset=utf-8'],
] as const;

/** The page talks only to its own origin. */
const PAGE_HEADERS = {
  'content-security-policy': "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-cache',
};

const MAX_LOOKUP_LENGTH = 2048;

/** `/`, `/ui`, `/ui/*`, `/api/topology`, `/api/topology/stream` and `/api/route` for the admin server. */
export function topologyRoutes(
  service: TopologyService,
  table: () => RouteTable | undefined,
): Map<string, AdminRoute> {
  const dir = UI_DIRS.find((candidate) => existsSync(join(candidate, 'index.html')));
  const files = new Map(
    dir ? UI_FILES.map(([name, type]) => [name, { body: readFileSync(join(dir, name)), type }] as const) : [],
  );
  const file =
    (name: (typeof UI_FILES)[number][0]): AdminRoute =>
    (_req, res) => {
      const found = files.get(name);
      if (!found) {
        res
          .writeHead(404, { 'content-type': 'text/plain; charset=utf-8' })
          .end(`the topology page's files are not installed (src/admin/ui); /api/topology still works\n`);
        return;
      }
      const { body, type } = found;
      res.writeHead(200, { ...PAGE_HEADERS, 'content-type': type, 'content-length': body.length }).end(body);
    };
  return new Map<string, AdminRoute>([
    ['/', file('index.html')],
    ['/ui', file('index.html')],
    ['/ui/', file('index.html')],
    ['/ui/app.js', file('app.js')],
    ['/ui/app.css', file('app.css')],
    [
      '/favicon.ico',
      (_req, res) => {
        res.writeHead(204).end();
      },
    ],
    ['/api/topology', async (_req, res) => sendJson(res, 200, await service.json())],
    ['/api/topology/stream', (req, res) => service.openStream(req, res)],
    [
      '/api/route',
      (_req, res, url) => {
        const host = url.searchParams.get('host') ?? '';
        const path = url.searchParams.get('path') || '/';
        const method = url.searchParams.get('method') || undefined;
        const portText = url.searchParams.get('port');
        const port = portText ? Number(portText) : undefined;
        if (
          !host ||
          host.length > MAX_LOOKUP_LENGTH ||
          path.length > MAX_LOOKUP_LENGTH ||
          !path.startsWith('/')
        ) {
          sendJson(res, 400, JSON.stringify({ error: 'give ?host= and a ?path= starting with /' }));
          return;
        }
        if (port !== undefined && !(Number.isInteger(port) && port > 0 && port < 65536)) {
          sendJson(res, 400, JSON.stringify({ error: '?port= must be a port number' }));
          return;
        }
        const current = table();
        const matches = current
          ? lookupRoute(current, { host, path, ...(method ? { method } : {}), ...(port ? { port } : {}) })
          : [];
        sendJson(res, 200, JSON.stringify({ host, path, ...(method ? { method } : {}), matches }));
      },
    ],
  ]);
}

function sendJson(res: ServerResponse, status: number, body: string): void {
  res
    .writeHead(status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
      'cache-control': 'no-store',
    })
    .end(body);
}
