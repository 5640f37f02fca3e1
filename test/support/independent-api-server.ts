import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A small Kubernetes API server written apart from test/support/kube-api-server, to check the fleet against
 * behaviour the project's own server may share its assumptions about. Like kube-apiserver, and unlike the project's:
 * - lists are paged (`limit` honoured, at most `pageSize` items, `metadata.continue` tokens);
 * - watches end on their own after `watchLifetimeMs`, send no bookmarks, and a resume from a resourceVersion
 *   older than the last compaction gets HTTP 200 with an ERROR event carrying a 410 Status, as kube-apiserver does;
 * - the MCS CRD is the upstream one: ServiceExport served only as multicluster.x-k8s.io/v1alpha1; no About API
 *   (ClusterProperty is 404), and discovery says so;
 * - every request needs `Authorization: Bearer <token>` (else 401 Status).
 * Plain HTTP: the fleet accepts http:// servers, and TLS is covered by the project's server.
 */
export interface IndependentApiServer {
  readonly url: string;
  /** Requests by kind: `list`, `watch`, `watch-410`, `unauthorized`. */
  readonly counts: Map<string, number>;
  /** Stores the object; `unseen`: no open watch hears of it (as events lost while a client was away). */
  put(object: KubeObject, options?: { readonly unseen?: boolean }): void;
  remove(resource: string, namespace: string, name: string): void;
  /** Forgets history and ends open watches (an API server restart): resuming from before now gets the 410 event. */
  compact(): void;
  close(): Promise<void>;
}

export interface KubeObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { name: string; namespace: string; resourceVersion?: string; [key: string]: unknown };
  readonly [key: string]: unknown;
}

interface Resource {
  readonly groupVersion: string;
  readonly plural: string;
  readonly kind: string;
}

const RESOURCES: readonly Resource[] = [
  { groupVersion: 'v1', plural: 'services', kind: 'Service' },
  { groupVersion: 'discovery.k8s.io/v1', plural: 'endpointslices', kind: 'EndpointSlice' },
  { groupVersion: 'multicluster.x-k8s.io/v1alpha1', plural: 'serviceexports', kind: 'ServiceExport' },
];

interface Event {
  readonly rv: number;
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED';
  readonly resource: string;
  readonly object: KubeObject;
}

export async function startIndependentApiServer(options: {
  readonly token: string;
  readonly pageSize?: number;
  readonly watchLifetimeMs?: number;
}): Promise<IndependentApiServer> {
  const pageSize = options.pageSize ?? 2;
  const watchLifetimeMs = options.watchLifetimeMs ?? 3000;
  let rv = 100;
  let compactedAt = 0;
  const objects = new Map<string, Map<string, KubeObject>>(RESOURCES.map((r) => [r.plural, new Map()]));
  const history: Event[] = [];
  const watchers = new Set<{ resource: string; send(event: Event): void; end(): void }>();
  const counts = new Map<string, number>();
  const count = (what: string) => counts.set(what, (counts.get(what) ?? 0) + 1);

  const record = (type: Event['type'], resource: string, object: KubeObject, unseen = false) => {
    if (unseen) return;
    const event = { rv, type, resource, object };
    history.push(event);
    for (const w of watchers) if (w.resource === resource) w.send(event);
  };

  const status = (res: ServerResponse, code: number, reason: string, message: string) => {
    res.writeHead(code, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', message, reason, code }));
  };
  const json = (res: ServerResponse, body: unknown) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };

  const handle = (req: IncomingMessage, res: ServerResponse) => {
    if (req.headers.authorization !== `Bearer ${options.token}`) {
      count('unauthorized');
      status(res, 401, 'Unauthorized', 'Unauthorized');
      return;
    }
    const url = new URL(req.url ?? '/', 'http://x');
    const path = url.pathname;
    if (path === '/api') return json(res, { kind: 'APIVersions', versions: ['v1'] });
    if (path === '/apis') {
      const groups = ['discovery.k8s.io/v1', 'multicluster.x-k8s.io/v1alpha1'].map((gv) => {
        const [name, version] = gv.split('/') as [string, string];
        const v = { groupVersion: gv, version };
        return { name, versions: [v], preferredVersion: v };
      });
      return json(res, { kind: 'APIGroupList', apiVersion: 'v1', groups });
    }
    const gvDoc = RESOURCES.filter(
      (r) => path === (r.groupVersion === 'v1' ? '/api/v1' : `/apis/${r.groupVersion}`),
    );
    if (gvDoc.length > 0) {
      return json(res, {
        kind: 'APIResourceList',
        groupVersion: gvDoc[0]!.groupVersion,
        resources: gvDoc.map((r) => ({
          name: r.plural,
          namespaced: true,
          kind: r.kind,
          verbs: ['get', 'list', 'watch'],
        })),
      });
    }
    const resource = RESOURCES.find(
      (r) => path === `${r.groupVersion === 'v1' ? '/api/v1' : `/apis/${r.groupVersion}`}/${r.plural}`,
    );
    if (!resource) return status(res, 404, 'NotFound', 'the server could not find the requested resource');
    const isWatch = url.searchParams.get('watch') === 'true' || url.searchParams.get('watch') === '1';
    if (!isWatch) {
      count('list');
      const all = [...objects.get(resource.plural)!.values()].sort((a, b) =>
        `${a.metadata.namespace}/${a.metadata.name}`.localeCompare(
          `${b.metadata.namespace}/${b.metadata.name}`,
        ),
      );
      const start = Number(
        url.searchParams.get('continue')
          ? Buffer.from(url.searchParams.get('continue')!, 'base64url').toString()
          : '0',
      );
      const limit = Math.min(Number(url.searchParams.get('limit') || pageSize) || pageSize, pageSize);
      const page = all.slice(start, start + limit);
      const next =
        start + limit < all.length ? Buffer.from(String(start + limit)).toString('base64url') : undefined;
      return json(res, {
        kind: `${resource.kind}List`,
        apiVersion: resource.groupVersion,
        metadata: { resourceVersion: String(rv), ...(next ? { continue: next } : {}) },
        items: page,
      });
    }
    const from = Number(url.searchParams.get('resourceVersion') || '0');
    res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    if (from < compactedAt) {
      count('watch-410');
      res.end(
        `${JSON.stringify({
          type: 'ERROR',
          object: {
            kind: 'Status',
            apiVersion: 'v1',
            status: 'Failure',
            message: `too old resource version: ${from} (${compactedAt})`,
            reason: 'Expired',
            code: 410,
          },
        })}\n`,
      );
      return;
    }
    count('watch');
    const send = (event: Event) =>
      res.write(
        `${JSON.stringify({ type: event.type, object: { ...event.object, metadata: { ...event.object.metadata, resourceVersion: String(event.rv) } } })}\n`,
      );
    for (const event of history) if (event.resource === resource.plural && event.rv > from) send(event);
    const watcher = { resource: resource.plural, send, end: () => end() };
    watchers.add(watcher);
    const end = () => {
      watchers.delete(watcher);
      clearTimeout(timer);
      res.end();
    };
    const timer = setTimeout(end, watchLifetimeMs);
    req.once('close', end);
  };

  const server: Server = createServer(handle);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  const resourceOf = (kind: string) => {
    const found = RESOURCES.find((r) => r.kind === kind);
    if (!found) throw new Error(`this server does not serve ${kind}`);
    return found.plural;
  };
  return {
    url: `http://127.0.0.1:${port}`,
    counts,
    put(object, putOptions = {}) {
      const resource = resourceOf(object.kind);
      const key = `${object.metadata.namespace}/${object.metadata.name}`;
      const existed = objects.get(resource)!.has(key);
      rv++;
      const stored = { ...object, metadata: { ...object.metadata, resourceVersion: String(rv) } };
      objects.get(resource)!.set(key, stored);
      record(existed ? 'MODIFIED' : 'ADDED', resource, stored, putOptions.unseen);
    },
    remove(resource, namespace, name) {
      const stored = objects.get(resource)?.get(`${namespace}/${name}`);
      if (!stored) return;
      objects.get(resource)!.delete(`${namespace}/${name}`);
      rv++;
      record('DELETED', resource, stored);
    },
    compact() {
      compactedAt = rv;
      history.length = 0;
      for (const w of [...watchers]) w.end();
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
}
