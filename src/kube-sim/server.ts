import { writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { ApiFailure, badRequest, forbidden, methodNotAllowed, unsupportedMediaType } from './api-status.ts';
import { unknownFields } from './crd-admission.ts';
import {
  apiGroup,
  apiGroupList,
  apiResourceList,
  apiVersions,
  openApiV3GroupVersion,
  openApiV3Root,
  type ServedResource,
} from './discovery.ts';
import { isObject, type JsonObject, metadataOf } from './json.ts';
import { applyJsonPatch, applyMergePatch } from './patch.ts';
import { ALL_CRDS, groupVersion, RESOURCES, type ResourceDef } from './resources.ts';
import { parseFieldSelector, parseLabelSelector } from './selectors.ts';
import { ObjectStore, type Watcher, type WatchFilter } from './store.ts';
import { dropFields, duplicateJsonFields, type FieldValidation, fieldValidationOf } from './validation.ts';

export interface KubeApiServerOptions {
  /** CRDs installed at start (`<plural>.<group>`); all of them by default. */
  readonly crds?: readonly string[];
  /** Served versions per CRD, overriding the upstream set (e.g. only `v1alpha1` of ServiceImport). */
  readonly crdVersions?: Readonly<Record<string, readonly string[]>>;
  /** How often watches that asked for bookmarks get one. */
  readonly bookmarkIntervalMs?: number;
  /** Events kept for watches to resume from; older ones are compacted away (410 Gone). */
  readonly historyLimit?: number;
  /** The user named in Forbidden messages. */
  readonly user?: string;
  /** Create the `default` and `kube-system` namespaces, as a fresh cluster has them. */
  readonly defaultNamespaces?: boolean;
  /** Serve HTTPS with this certificate (PEM) instead of plain HTTP. */
  readonly tls?: {
    readonly cert: string;
    readonly key: string;
    /** Client certificates signed by this CA authenticate as `x509:<CN>` (see acceptToken). */
    readonly clientCa?: string;
  };
  /**
   * Bearer-token authentication: every request (discovery included) whose token this refuses gets 401
   * Unauthorized, as kube-apiserver answers an unknown or expired token. A request without a token but with a
   * verified client certificate is asked about as `x509:<CN>`. Unset: every request is let in.
   */
  readonly acceptToken?: (token: string | undefined) => boolean;
  /**
   * Accept EndpointSlice addresses in 127.0.0.0/8 and ::1, which kube-apiserver refuses: the demo's simulated
   * clusters run their pods as processes on this machine's loopback.
   */
  readonly allowLoopbackEndpoints?: boolean;
}

export interface RequestRecord {
  readonly method: string;
  readonly verb: string;
  readonly path: string;
  readonly group: string;
  readonly resource: string;
  readonly subresource: string | undefined;
  readonly namespace: string | undefined;
  readonly name: string | undefined;
  readonly contentType: string | undefined;
  /** The bearer token the client sent: tells apart clients given different kubeconfigs. */
  readonly token: string | undefined;
  readonly status: number;
}

interface Route {
  readonly def: ResourceDef;
  readonly version: string;
  readonly namespace: string | undefined;
  readonly name: string | undefined;
  readonly subresource: string | undefined;
}

interface ActiveWatch extends Watcher {
  readonly res: ServerResponse;
  readonly bookmarks: boolean;
  readonly apiVersion: string;
  close(): void;
}

const PATCH_TYPES = [
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/apply-patch+yaml',
];
const BUILTIN_PATCH_TYPES = [...PATCH_TYPES, 'application/strategic-merge-patch+json'];

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
    return [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '- name: test',
      '  cluster:',
      `    server: ${this.url}`,
      // client-node refuses plain http unless TLS verification is explicitly off.
      '    insecure-skip-tls-verify: true',
      'contexts:',
      '- name: test',
      '  context:',
      '    cluster: test',
      '    user: test',
      `    namespace: ${namespace}`,
      'current-context: test',
      'users:',
      '- name: test',
      '  user:',
      `    token: ${token}`,
      '',
    ].join('\n');
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

  #defFor(apiVersion: string, kind: string): ResourceDef {
    const slash = apiVersion.indexOf('/');
    const group = slash < 0 ? '' : apiVersion.slice(0, slash);
    const def = RESOURCES.find((r) => r.group === group && r.kind === kind);
    if (!def) throw new Error(`unknown resource ${apiVersion} ${kind}`);
    return def;
  }

  #resourceDef(resource: string): ResourceDef {
    const [plural, ...group] = resource.split('.');
    const def = RESOURCES.find(
      (r) => r.resource === plural && (group.length === 0 || r.group === group.join('.')),
    );
    if (!def) throw new Error(`unknown resource ${resource}`);
    return def;
  }

  create(obj: JsonObject): JsonObject {
    const def = this.#defFor(String(obj.apiVersion), String(obj.kind));
    const meta = metadataOf(obj);
    const ns = def.namespaced ? String(meta.namespace ?? 'default') : undefined;
    return this.#store.create(def, ns, obj, (n) => this.#namespaceExists(n));
  }

  /** Merge-patches an object (or its status) as `kubectl patch --type=merge` would. */
  patch(
    resource: string,
    namespace: string | undefined,
    name: string,
    patch: JsonObject,
    subresource?: 'status',
  ): JsonObject {
    const def = this.#resourceDef(resource);
    const current = this.#store.require(def, namespace, name);
    const patched = applyMergePatch(current, patch);
    if (!isObject(patched)) throw new Error('patch result is not an object');
    return this.#store.update(def, namespace, name, patched, subresource);
  }

  delete(resource: string, namespace: string | undefined, name: string): JsonObject {
    return this.#store.delete(this.#resourceDef(resource), namespace, name, undefined);
  }

  get(resource: string, namespace: string | undefined, name: string): JsonObject | undefined {
    return this.#store.get(this.#resourceDef(resource), namespace, name);
  }

  list(resource: string): JsonObject[] {
    return this.#store.list(this.#resourceDef(resource), { namespace: undefined, labels: [], fields: [] });
  }

  /** Stores an object without validation, as a CRD without a schema (or a hand edit of etcd) would allow. */
  putUnvalidated(resource: string, obj: JsonObject): JsonObject {
    return this.#store.putUnvalidated(this.#resourceDef(resource), obj);
  }

  // ---- HTTP ----

  #served(): ServedResource[] {
    return RESOURCES.flatMap((def) => {
      if (!def.crd) return [{ def, versions: def.versions }];
      const versions = this.#installed.get(def.crd);
      return versions ? [{ def, versions }] : [];
    });
  }

  #namespaceExists(name: string): boolean {
    return this.#store.namespaceExists(name, this.#resourceDef('namespaces'));
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
      const doc = this.#discovery(segments, served);
      if (doc !== null) {
        if (doc === undefined) this.#sendNotFound(res);
        else this.#sendJson(res, 200, doc);
        return;
      }
    }

    const route = this.#route(segments, served);
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
        this.#watch(route, url, res);
        record(200);
        return;
      }
      const [status, result, warnings] = this.#dispatch(verb, route, url, body, contentType);
      record(status);
      this.#sendJson(res, status, result, warnings);
    } catch (err) {
      if (!(err instanceof ApiFailure)) throw err;
      record(err.code);
      this.#sendJson(res, err.code, err.toStatus());
    }
  }

  /** `null`: not a discovery path; `undefined`: a discovery path for something not served (404). */
  #discovery(
    segments: readonly string[],
    served: readonly ServedResource[],
  ): Record<string, unknown> | undefined | null {
    const [root, a, b, c] = segments;
    if (root === 'version' && segments.length === 1) {
      return { major: '1', minor: '33', gitVersion: 'v1.33.0', platform: 'linux/amd64' };
    }
    if ((root === 'healthz' || root === 'readyz' || root === 'livez') && segments.length === 1)
      return { status: 'ok' };
    if (root === 'openapi' && a === 'v3') {
      if (segments.length === 2) return openApiV3Root(served);
      if (b === 'api' && segments.length === 4 && c) return openApiV3GroupVersion(served, '', c);
      const [, , , group, version] = segments;
      if (b === 'apis' && segments.length === 5 && group && version)
        return openApiV3GroupVersion(served, group, version);
      return undefined;
    }
    if (root === 'api') {
      if (segments.length === 1) return apiVersions();
      if (segments.length === 2)
        return a === 'v1' ? (apiResourceList(served, '', 'v1') ?? undefined) : undefined;
      return null;
    }
    if (root === 'apis') {
      if (segments.length === 1) return apiGroupList(served);
      if (segments.length === 2 && a) return apiGroup(served, a);
      if (segments.length === 3 && a && b && c === undefined) return apiResourceList(served, a, b);
    }
    return null;
  }

  #route(segments: readonly string[], served: readonly ServedResource[]): Route | undefined {
    let group: string;
    let version: string | undefined;
    let rest: readonly string[];
    if (segments[0] === 'api') {
      group = '';
      version = segments[1];
      rest = segments.slice(2);
    } else if (segments[0] === 'apis') {
      group = segments[1] ?? '';
      version = segments[2];
      rest = segments.slice(3);
    } else return undefined;
    if (!version) return undefined;
    const find = (resource: string | undefined): ResourceDef | undefined =>
      served.find((s) => s.def.group === group && s.def.resource === resource && s.versions.includes(version))
        ?.def;

    // /namespaces/{ns}/{resource}[/{name}[/{sub}]] for namespaced resources.
    if (
      rest[0] === 'namespaces' &&
      rest.length >= 3 &&
      !(rest.length === 3 && (rest[2] === 'status' || rest[2] === 'finalize'))
    ) {
      const def = find(rest[2]);
      if (!def?.namespaced || rest.length > 5) return undefined;
      return { def, version, namespace: rest[1], name: rest[3], subresource: rest[4] };
    }
    const def = find(rest[0]);
    if (!def || rest.length > 3) return undefined;
    if (def.namespaced && rest.length > 1) return undefined;
    return { def, version, namespace: undefined, name: rest[1], subresource: rest[2] };
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

  #dispatch(
    verb: string,
    route: Route,
    url: URL,
    body: string,
    contentType: string | undefined,
  ): [number, unknown, (readonly string[])?] {
    const { def, namespace, name } = route;
    const gv = groupVersion(def.group, route.version);
    const out = (obj: JsonObject): JsonObject => ({ ...obj, apiVersion: gv, kind: def.kind });
    if (route.subresource !== undefined && route.subresource !== 'status') throw this.#notFoundError();
    if (route.subresource === 'status' && !def.status) throw this.#notFoundError();
    switch (verb) {
      case 'list':
        return [200, this.#list(route, url)];
      case 'get':
        return [200, out(this.#store.require(def, namespace, name as string))];
      case 'create': {
        const directive = fieldValidationOf(url, 'CreateOptions');
        const obj = parseJsonBody(body);
        checkTypeMeta(obj, gv, def.kind);
        obj.apiVersion = gv;
        obj.kind = def.kind;
        const warnings = strictDecoding(directive, obj, duplicateJsonFields(body), def.kind, route.version);
        return [201, out(this.#store.create(def, namespace, obj, (n) => this.#namespaceExists(n))), warnings];
      }
      case 'update': {
        const directive = fieldValidationOf(url, 'UpdateOptions');
        const obj = parseJsonBody(body);
        checkTypeMeta(obj, gv, def.kind);
        const typed = { ...obj, apiVersion: gv, kind: def.kind };
        const warnings = strictDecoding(directive, typed, duplicateJsonFields(body), def.kind, route.version);
        const { apiVersion: _a, kind: _k, ...fields } = typed;
        for (const key of Object.keys(obj))
          if (!(key in fields) && key !== 'apiVersion' && key !== 'kind') delete obj[key];
        return [
          200,
          out(
            this.#store.update(
              def,
              namespace,
              name as string,
              obj,
              route.subresource === 'status' ? 'status' : undefined,
            ),
          ),
          warnings,
        ];
      }
      case 'patch': {
        const directive = fieldValidationOf(url, 'PatchOptions');
        const current = out(this.#store.require(def, namespace, name as string));
        const accepted = def.crd ? PATCH_TYPES : BUILTIN_PATCH_TYPES;
        if (!contentType || !accepted.includes(contentType))
          throw unsupportedMediaType(contentType ?? '', accepted);
        let patched: unknown;
        if (contentType === 'application/json-patch+json') patched = applyJsonPatch(current, parseJson(body));
        else if (contentType === 'application/apply-patch+yaml') {
          if (!url.searchParams.get('fieldManager')) {
            throw new ApiFailure(
              422,
              'Invalid',
              'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch',
            );
          }
          // Server-side apply without field ownership: the applied configuration is merged in (JSON is valid YAML).
          patched = applyMergePatch(current, parseJson(body));
        } else {
          // Strategic merge on built-ins is approximated by a merge patch: the client here never relies on the
          // difference (list merge keys), and CRDs reject it with 415 as kube-apiserver does.
          patched = applyMergePatch(current, parseJson(body));
        }
        if (!isObject(patched)) throw badRequest('patch result is not an object');
        // Repeated keys of a merge patch are the object's own paths; a JSON patch is a list of operations.
        const duplicates = contentType === 'application/json-patch+json' ? [] : duplicateJsonFields(body);
        const warnings = strictDecoding(directive, patched, duplicates, def.kind, route.version, true);
        return [
          200,
          out(
            this.#store.update(
              def,
              namespace,
              name as string,
              patched,
              route.subresource === 'status' ? 'status' : undefined,
            ),
          ),
          warnings,
        ];
      }
      case 'delete': {
        const opts = body ? parseJson(body) : undefined;
        const preconditions = isObject(opts) && isObject(opts.preconditions) ? opts.preconditions : undefined;
        if (def.kind === 'Namespace') {
          for (const item of this.#store.contents(RESOURCES, name as string)) {
            this.#store.delete(item.def, name, item.name, undefined);
          }
        }
        return [200, out(this.#store.delete(def, namespace, name as string, preconditions))];
      }
      default:
        throw methodNotAllowed(`the server does not allow this method on the requested resource (${verb})`);
    }
  }

  #notFoundError(): ApiFailure {
    return new ApiFailure(404, 'NotFound', 'the server could not find the requested resource', {});
  }

  #filter(route: Route, url: URL): WatchFilter {
    const fields = parseFieldSelector(url.searchParams.get('fieldSelector'), [
      'metadata.name',
      'metadata.namespace',
      ...(route.def.fieldSelectors ?? []),
    ]);
    return {
      namespace: route.namespace,
      labels: parseLabelSelector(url.searchParams.get('labelSelector')),
      fields,
    };
  }

  #list(route: Route, url: URL): JsonObject {
    const { def } = route;
    const gv = groupVersion(def.group, route.version);
    const token = url.searchParams.get('continue');
    const start = token ? Buffer.from(token, 'base64').toString('utf8') : undefined;
    const limit = Number(url.searchParams.get('limit') ?? '0');
    const { items, remaining } = this.#store.listPage(def, this.#filter(route, url), start, limit);
    const next =
      remaining > 0
        ? Buffer.from(itemKey(items[items.length - 1] as JsonObject)).toString('base64')
        : undefined;
    return {
      kind: `${def.kind}List`,
      apiVersion: gv,
      metadata: {
        resourceVersion: String(this.#store.resourceVersion),
        ...(next ? { continue: next, remainingItemCount: remaining } : {}),
      },
      // Built-in lists carry items without kind/apiVersion; custom resource lists keep them.
      items: items.map((item) => {
        if (def.crd) return { ...item, apiVersion: gv, kind: def.kind };
        const { apiVersion: _a, kind: _k, ...rest } = item;
        return rest;
      }),
    };
  }

  #watch(route: Route, url: URL, res: ServerResponse): void {
    const { def } = route;
    const gv = groupVersion(def.group, route.version);
    const filter = this.#filter(route, url);
    const rvParam = url.searchParams.get('resourceVersion') ?? '';
    let fromRv: number | undefined;
    if (rvParam !== '' && rvParam !== '0') {
      if (!/^\d+$/.test(rvParam)) throw badRequest(`invalid resource version: ${rvParam}`);
      fromRv = Number(rvParam);
    }
    res.writeHead(200, {
      'Content-Type': 'application/json',
      'Transfer-Encoding': 'chunked',
      'Cache-Control': 'no-cache, private',
    });
    res.flushHeaders();
    let closed = false;
    const watch: ActiveWatch = {
      def,
      filter,
      res,
      apiVersion: gv,
      bookmarks: url.searchParams.get('allowWatchBookmarks') === 'true',
      send: (type, object) => {
        if (closed) return;
        const obj = type === 'ERROR' ? object : { ...object, apiVersion: gv, kind: def.kind };
        res.write(`${JSON.stringify({ type, object: obj })}\n`);
      },
      close: () => {
        if (closed) return;
        closed = true;
        this.#store.removeWatcher(watch);
        this.#watches.delete(watch);
        clearTimeout(timer);
        res.end();
      },
    };
    const timeoutSeconds = Number(url.searchParams.get('timeoutSeconds') ?? '0');
    const timer = timeoutSeconds > 0 ? setTimeout(() => watch.close(), timeoutSeconds * 1000) : undefined;
    res.on('close', () => watch.close());
    if (fromRv === undefined) {
      for (const obj of this.#store.list(def, filter)) watch.send('ADDED', obj);
    } else {
      try {
        this.#store.replay(watch, fromRv);
      } catch (err) {
        if (!(err instanceof ApiFailure)) throw err;
        // The watch cache reports an expired resourceVersion as an ERROR event on an open stream.
        watch.send('ERROR', err.toStatus());
        watch.close();
        return;
      }
    }
    this.#store.addWatcher(watch);
    this.#watches.add(watch);
  }

  #sendNotFound(res: ServerResponse): void {
    this.#sendJson(res, 404, this.#notFoundError().toStatus());
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

/**
 * Strict decoding as kube-apiserver does it for a create, update or patch (KEP-2885): repeated keys and fields the
 * kind does not declare (its schema, or its Go struct and ObjectMeta) are dropped from `obj`; Strict refuses the
 * request (400 `cannot be handled as a <Kind>: strict decoding error: ...`, a 422 on `patch` for patches), Warn
 * returns them as warnings, Ignore says nothing.
 */
function strictDecoding(
  directive: FieldValidation,
  obj: JsonObject,
  duplicates: readonly string[],
  kind: string,
  version: string,
  patch = false,
): readonly string[] {
  const unknown = unknownFields(obj);
  if (directive === 'Strict' && (duplicates.length > 0 || unknown.length > 0)) {
    const problems = [
      ...duplicates.map((d) => `duplicate field "${d}"`),
      ...unknown.map((u) => `unknown field "${u}"`),
    ];
    const error = `strict decoding error: ${problems.join(', ')}`;
    if (patch) {
      const message = `Invalid value: ${JSON.stringify(JSON.stringify(obj))}: ${error}`;
      throw new ApiFailure(422, 'Invalid', ` "" is invalid: patch: ${message}`, {
        causes: [{ reason: 'FieldValueInvalid', message, field: 'patch' }],
      });
    }
    throw badRequest(`${kind} in version "${version}" cannot be handled as a ${kind}: ${error}`);
  }
  dropFields(obj, unknown);
  if (directive === 'Ignore') return [];
  return [...duplicates.map((d) => `duplicate field "${d}"`), ...unknown.map((u) => `unknown field "${u}"`)];
}

function verbOf(method: string, route: Route, url: URL): string {
  const watch = url.searchParams.get('watch');
  switch (method) {
    case 'GET':
      if (route.name === undefined) return watch === 'true' || watch === '1' ? 'watch' : 'list';
      return 'get';
    case 'POST':
      return route.name === undefined ? 'create' : 'unsupported';
    case 'PUT':
      return route.name === undefined ? 'unsupported' : 'update';
    case 'PATCH':
      return route.name === undefined ? 'unsupported' : 'patch';
    case 'DELETE':
      return route.name === undefined ? 'deletecollection' : 'delete';
    default:
      return 'unsupported';
  }
}

function itemKey(item: JsonObject): string {
  const meta = metadataOf(item);
  return meta.namespace ? `${String(meta.namespace)}/${String(meta.name)}` : String(meta.name);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw badRequest(`the body of the request could not be decoded: ${(err as Error).message}`);
  }
}

function parseJsonBody(text: string): JsonObject {
  const value = parseJson(text);
  if (!isObject(value)) throw badRequest('the body of the request must be a JSON object');
  return value;
}

function checkTypeMeta(obj: JsonObject, gv: string, kind: string): void {
  if (obj.apiVersion !== undefined && obj.apiVersion !== gv) {
    throw badRequest(
      `the API version in the data (${String(obj.apiVersion)}) does not match the expected API version (${gv})`,
    );
  }
  if (obj.kind !== undefined && obj.kind !== kind) {
    throw badRequest(`the kind in the data (${String(obj.kind)}) does not match the expected kind (${kind})`);
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
