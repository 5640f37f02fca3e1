import { writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { isRecord } from '../../snapshot/json-object.ts';
import { ApiFailure, forbidden } from './api-status.ts';
import type { ServedResource } from './discovery.ts';
import { type JsonObject, metadataOf } from './json.ts';
import { kubeconfigYaml } from './kubeconfig.ts';
import { applyMergePatch } from './patch.ts';
import { discoveryDocument, type Route, routeOf, verbOf } from './request-route.ts';
import { ALL_CRDS, RESOURCES, resourceDefNamed, resourceDefOf } from './resources.ts';
import type { KubeApiServerOptions, RequestRecord } from './server-options.ts';
import { ObjectStore } from './store.ts';
import { dispatchVerb, namespaceExists, notFoundError } from './verbs.ts';
import { type ActiveWatch, openWatch } from './watch-stream.ts';

/**
 * A Kubernetes API server that speaks the wire protocol over plain HTTP on 127.0.0.1, for tests that drive the
 * real @kubernetes/client-node. Not a mock of the client: discovery, list, watch (with bookmarks, resume and
 * 410 Gone), create/update/patch/delete, the status subresource, optimistic concurrency and validation behave as
 * kube-apiserver documents them (https://kubernetes.io/docs/reference/using-api/api-concepts/).
 */
export class KubeApiServer {
  readonly #store: ObjectStore;
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  readonly #watches = new Set<ActiveWatch>();
  readonly #installed = new Map<string, readonly string[]>();
  readonly #forbidden = new Map<string, ReadonlySet<string> | 'all'>();
  readonly #options: KubeApiServerOptions;
  readonly #user: string;
  #bookmarkTimer: NodeJS.Timeout | undefined;
  #port = 0;
  #running = false;
  readonly requests: RequestRecord[] = [];
  /** Called after each resource request is answered: lets a test act between a client's read and its write. */
  onRequest: ((request: RequestRecord) => void) | undefined;
  /** See KubeApiServerOptions.acceptToken; may be replaced while running (a rotated or revoked token). */
  acceptToken: ((token: string | undefined) => boolean) | undefined;
  /** Requests refused with 401. */
  unauthorizedCount = 0;
  /**
   * Awaited before a resource request is served: a test holds a request (a slow or stuck API server) by returning
   * a promise it resolves later.
   */
  beforeRequest:
    | ((request: Pick<RequestRecord, 'method' | 'verb' | 'resource' | 'subresource'>) => Promise<void> | void)
    | undefined;

  constructor(options: KubeApiServerOptions = {}) {
    this.#options = options;
    this.#user = options.user ?? 'system:serviceaccount:clusterset-gateway:clusterset-gateway';
    this.#store = new ObjectStore(options.historyLimit ?? 10_000, {
      allowLoopbackEndpoints: options.allowLoopbackEndpoints === true,
    });
    for (const crd of options.crds ?? ALL_CRDS) this.installCrd(crd, options.crdVersions?.[crd]);
    this.acceptToken = options.acceptToken;
    const handler = (req: IncomingMessage, res: ServerResponse): void => {
      this.#handle(req, res).catch((err: unknown) => {
        if (!res.headersSent)
          this.#sendJson(res, 500, {
            kind: 'Status',
            apiVersion: 'v1',
            status: 'Failure',
            message: String(err),
            reason: 'InternalError',
            code: 500,
          });
        else res.destroy();
      });
    };
    const { tls } = options;
    this.#server = tls
      ? createHttpsServer(
          {
            cert: tls.cert,
            key: tls.key,
            // Like kube-apiserver: a client certificate is asked for, never required (tokens work without one).
            ...(tls.clientCa ? { ca: tls.clientCa, requestCert: true, rejectUnauthorized: false } : {}),
          },
          handler,
        )
      : createServer(handler);
    this.#server.on('connection', (socket) => {
      this.#sockets.add(socket);
      socket.on('close', () => this.#sockets.delete(socket));
    });
    if (options.defaultNamespaces !== false) {
      for (const ns of ['default', 'kube-system'])
        this.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    }
  }

  // ---- lifecycle ----

  async start(): Promise<void> {
    if (this.#running) return;
    await new Promise<void>((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen(this.#port, '127.0.0.1', () => {
        this.#server.off('error', reject);
        resolve();
      });
    });
    const address = this.#server.address();
    if (address && typeof address === 'object') this.#port = address.port;
    this.#running = true;
    const interval = this.#options.bookmarkIntervalMs ?? 1000;
    this.#bookmarkTimer = setInterval(() => this.sendBookmarks(), interval);
    this.#bookmarkTimer.unref();
  }

  /** Stops listening and cuts every connection; the stored objects survive for `start()`. */
  async stop(): Promise<void> {
    if (!this.#running) return;
    this.#running = false;
    clearInterval(this.#bookmarkTimer);
    const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    for (const watch of this.#watches) watch.close();
    for (const socket of this.#sockets) socket.destroy();
    await closed;
  }

  get port(): number {
    return this.#port;
  }

  get url(): string {
    return `${this.#options.tls ? 'https' : 'http'}://127.0.0.1:${this.#port}`;
  }

  /** A kubeconfig for this server: plain http with a bearer token. */
  kubeconfigYaml(namespace = 'default', token = 'test-token'): string {
    return kubeconfigYaml(this.url, namespace, token);
  }

  writeKubeconfig(path: string, token?: string): string {
    writeFileSync(path, this.kubeconfigYaml('default', token));
    return path;
  }

  // ---- test controls ----

  /** Cuts every open watch connection abruptly, as a load balancer or apiserver restart would. */
  dropWatches(): number {
    const n = this.#watches.size;
    for (const watch of [...this.#watches]) {
      watch.close();
      watch.res.socket?.destroy();
    }
    return n;
  }

  /** Compacts history: watches resuming from any resourceVersion seen so far get 410 Gone. */
  expireHistory(): void {
    this.#store.compact();
  }

  sendBookmarks(): void {
    for (const watch of this.#watches) if (watch.bookmarks) this.#store.bookmark(watch, watch.apiVersion);
  }

  /** Denies verbs on a resource (`httproutes`, `httproutes/status`, or `gateways.gateway.networking.k8s.io`). */
  setForbidden(resource: string, verbs?: readonly string[]): void {
    this.#forbidden.set(resource, verbs ? new Set(verbs) : 'all');
  }

  clearForbidden(resource?: string): void {
    if (resource === undefined) this.#forbidden.clear();
    else this.#forbidden.delete(resource);
  }

  installCrd(name: string, versions?: readonly string[]): void {
    const def = RESOURCES.find((r) => r.crd === name);
    if (!def) throw new Error(`unknown CRD ${name}`);
    this.#installed.set(name, versions ?? def.versions);
  }

  /** Removes a CRD; like the real server, its objects go away and open watches end. */
  uninstallCrd(name: string): void {
    this.#installed.delete(name);
    const def = RESOURCES.find((r) => r.crd === name);
    if (def) this.#store.clear(def);
    for (const watch of [...this.#watches]) if (watch.def.crd === name) watch.close();
  }

  get watchCount(): number {
    return this.#watches.size;
  }

  get resourceVersion(): string {
    return String(this.#store.resourceVersion);
  }

  // ---- direct store access for test setup and assertions (same validation as the HTTP path) ----

  create(obj: JsonObject): JsonObject {
    const def = resourceDefOf(String(obj.apiVersion), String(obj.kind));
    const meta = metadataOf(obj);
    const ns = def.namespaced ? String(meta.namespace ?? 'default') : undefined;
    return this.#store.create(def, ns, obj, (n) => namespaceExists(this.#store, n));
  }

  /** Merge-patches an object (or its status) as `kubectl patch --type=merge` would. */
  patch(
    resource: string,
    namespace: string | undefined,
    name: string,
    patch: JsonObject,
    subresource?: 'status',
  ): JsonObject {
    const def = resourceDefNamed(resource);
    const current = this.#store.require(def, namespace, name);
    const patched = applyMergePatch(current, patch);
    if (!isRecord(patched)) throw new Error('patch result is not an object');
    return this.#store.update(def, namespace, name, patched, subresource);
  }

  delete(resource: string, namespace: string | undefined, name: string): JsonObject {
    return this.#store.delete(resourceDefNamed(resource), namespace, name, undefined);
  }

  get(resource: string, namespace: string | undefined, name: string): JsonObject | undefined {
    return this.#store.get(resourceDefNamed(resource), namespace, name);
  }

  list(resource: string): JsonObject[] {
    return this.#store.list(resourceDefNamed(resource), { namespace: undefined, labels: [], fields: [] });
  }

  /** Stores an object without validation, as a CRD without a schema (or a hand edit of etcd) would allow. */
  putUnvalidated(resource: string, obj: JsonObject): JsonObject {
    return this.#store.putUnvalidated(resourceDefNamed(resource), obj);
  }

  // ---- HTTP ----

  #served(): ServedResource[] {
    return RESOURCES.flatMap((def) => {
      if (!def.crd) return [{ def, versions: def.versions }];
      const versions = this.#installed.get(def.crd);
      return versions ? [{ def, versions }] : [];
    });
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const method = req.method ?? 'GET';
    const body = method === 'GET' || method === 'HEAD' ? '' : await readBody(req);
    const segments = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
    const served = this.#served();

    if (this.acceptToken && !this.acceptToken(credentialOf(req))) {
      this.unauthorizedCount++;
      this.#sendJson(res, 401, {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'Unauthorized',
        reason: 'Unauthorized',
        code: 401,
      });
      return;
    }

    if (method === 'GET') {
      const doc = discoveryDocument(segments, served);
      if (doc !== null) {
        if (doc === undefined) this.#sendNotFound(res);
        else this.#sendJson(res, 200, doc);
        return;
      }
    }

    const route = routeOf(segments, served);
    if (!route) {
      this.#sendNotFound(res);
      return;
    }
    const verb = verbOf(method, route, url);
    const contentType = req.headers['content-type']?.split(';')[0]?.trim();
    await this.beforeRequest?.({
      method,
      verb,
      resource: route.def.resource,
      subresource: route.subresource,
    });
    const record = (status: number): void => {
      const entry: RequestRecord = {
        method,
        verb,
        path: url.pathname,
        group: route.def.group,
        resource: route.def.resource,
        subresource: route.subresource,
        namespace: route.namespace,
        name: route.name,
        contentType,
        token: /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1],
        status,
      };
      this.requests.push(entry);
      this.onRequest?.(entry);
    };
    try {
      this.#authorize(verb, route);
      if (verb === 'watch') {
        openWatch(this.#store, this.#watches, route, url, res);
        record(200);
        return;
      }
      const [status, result, warnings] = dispatchVerb(this.#store, verb, route, url, body, contentType);
      record(status);
      this.#sendJson(res, status, result, warnings);
    } catch (err) {
      if (!(err instanceof ApiFailure)) throw err;
      record(err.code);
      this.#sendJson(res, err.code, err.toStatus());
    }
  }

  #authorize(verb: string, route: Route): void {
    const resource = route.subresource ? `${route.def.resource}/${route.subresource}` : route.def.resource;
    for (const key of [resource, `${resource}.${route.def.group}`]) {
      const rule = this.#forbidden.get(key);
      if (rule === 'all' || rule?.has(verb)) {
        throw forbidden(
          this.#user,
          verb,
          {
            group: route.def.group,
            kind: route.def.kind,
            resource,
            ...(route.name ? { name: route.name } : {}),
          },
          route.namespace,
        );
      }
    }
  }

  #sendNotFound(res: ServerResponse): void {
    this.#sendJson(res, 404, notFoundError().toStatus());
  }

  #sendJson(res: ServerResponse, status: number, body: unknown, warnings: readonly string[] = []): void {
    const text = JSON.stringify(body);
    res.writeHead(status, {
      'Content-Type': 'application/json',
      'Content-Length': Buffer.byteLength(text),
      // RFC 7234 warn-code 299, agent "-", the text quoted as Go's strconv.Quote quotes it (k8s.io/apiserver warning).
      ...(warnings.length > 0 ? { Warning: warnings.map((w) => `299 - ${JSON.stringify(w)}`) } : {}),
    });
    res.end(text);
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

export async function startKubeApiServer(options: KubeApiServerOptions = {}): Promise<KubeApiServer> {
  const server = new KubeApiServer(options);
  await server.start();
  return server;
}

/** The bearer token, else `x509:<CN>` of a client certificate the server's client CA verified. */
function credentialOf(req: IncomingMessage): string | undefined {
  const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
  if (token) return token;
  const socket = req.socket as TLSSocket;
  if (typeof socket.getPeerCertificate !== 'function' || !socket.authorized) return undefined;
  const cn = socket.getPeerCertificate().subject?.CN;
  return cn ? `x509:${cn}` : undefined;
}
