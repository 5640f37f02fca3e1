import type {
  BackendCluster,
  ClustersetListenerConfig,
  ListenerConfig,
  RouteEntry,
} from '../ir/route-table.ts';
import type { StatusUpdate } from '../ir/status.ts';
import { resolveServiceBackend, resolveServiceImportBackend } from '../mcs/backends.ts';
import { serviceImportSpec } from '../mcs/service-import-spec.ts';
import type { McsWarning } from '../mcs/warnings.ts';
import type { HTTPRoute } from '../snapshot/resources.ts';
import type { Snapshot } from '../snapshot/snapshot.ts';
import { keyOf, namespaceOf } from './defaults.ts';
import { type MeshParent, meshParentsOf, type ParentPorts, resolveMeshParent } from './mesh-parents.ts';
import type { TranslateOptions } from './options.ts';
import { type ParentVerdict, type RouteCoreOutcome, translateRouteCore } from './route-core.ts';
import { type AttachedRoute, buildVirtualHosts } from './virtual-hosts.ts';

/** The DNS suffix of clusterset-wide service names (KEP-1645). */
export const CLUSTERSET_DOMAIN = 'svc.clusterset.local';

/** The `gateway` of clusterset listeners, and so the `gateway` label of east-west metrics. */
export const CLUSTERSET_GATEWAY = 'east-west';

/** `<name>.<namespace>.svc.clusterset.local`. */
export function clustersetHostname(namespace: string, name: string): string {
  return `${name}.${namespace}.${CLUSTERSET_DOMAIN}`;
}

interface Frontend {
  readonly namespace: string;
  readonly name: string;
  /** Port to what its implicit default action sends to: the ServiceImport's port, else a parent Service's. */
  readonly defaults: Map<number, 'ServiceImport' | 'Service'>;
  /** Port to the GAMMA routes attached to it. */
  readonly routes: Map<number, Map<string, AttachedRoute>>;
  /** An accepted GAMMA route has this name's Service as parent. */
  serviceParent: boolean;
}

/** The clusterset side of a translation: the east-west listener and what it sends to. */
export interface ClustersetListenerResult {
  readonly listener: ClustersetListenerConfig;
  /** By id, sorted; the Gateway side's backend of the same id is the same cluster. */
  readonly backends: ReadonlyMap<string, BackendCluster>;
  /** Status of each route with mesh parents (those parents only), by `namespace/name`. */
  readonly routeStatuses: ReadonlyMap<string, StatusUpdate>;
  readonly warnings: readonly McsWarning[];
}

/**
 * The clusterset listener step of translate() (TranslateOptions.eastWest), a peer of the Gateway listeners step:
 *
 * - every ServiceImport `<name>` in `<ns>` gets the hostname `<name>.<ns>.svc.clusterset.local`, one listener per
 *   import port, whose implicit default action sends to that ServiceImport port (locality tiers as always);
 * - GAMMA (GEP-1426): an HTTPRoute whose parentRef is a core Service or a ServiceImport kind applies to that
 *   name's east-west traffic, on the parentRef port or on every port of the parent. Its rules *replace* the
 *   default action for those ports ("When you create an xRoute targeting a service as a parentRef you are
 *   replacing that implicit logic - not adding to it", GEP-1426 "Route presence"): a request that matches no
 *   rule gets 404, as on a Gateway. Ports the routes do not cover keep the default (mesh conformance
 *   MeshPorts). A Service parent without a ServiceImport still gets the hostname; its uncovered ports send
 *   to the Service's own (local) endpoints (GEP-1748: a Service means this cluster's endpoints);
 * - a mesh route's `spec.hostnames` is ignored (GEP-1426 "hostnames field": SHOULD NOT infer functionality);
 * - the routes get a `status.parents` entry per mesh parentRef, merged with their Gateway parents' entries.
 */
export function translateClustersetListener(
  snapshot: Snapshot,
  options: TranslateOptions,
): ClustersetListenerResult {
  const backends = new Map<string, BackendCluster>();
  const warnings: McsWarning[] = [];
  const frontends = new Map<string, Frontend>();
  const frontend = (namespace: string, name: string): Frontend => {
    const key = `${namespace}/${name}`;
    let found = frontends.get(key);
    if (!found) {
      found = { namespace, name, defaults: new Map(), routes: new Map(), serviceParent: false };
      frontends.set(key, found);
    }
    return found;
  };

  for (const serviceImport of snapshot.list('ServiceImport')) {
    const namespace = namespaceOf(serviceImport);
    const target = frontend(namespace, serviceImport.metadata.name);
    for (const { port } of serviceImportSpec(serviceImport).ports ?? [])
      target.defaults.set(port, 'ServiceImport');
  }

  const routeStatuses = new Map<string, StatusUpdate>();
  for (const route of snapshot.httpRoutes) {
    const parents = meshParentsOf(route, options);
    if (parents.length === 0) continue;
    const outcome = translateMeshRoute(snapshot, options, route, parents);
    routeStatuses.set(keyOf(route), outcome.status);
    if (outcome.accepted.length === 0) continue;
    for (const [id, backend] of outcome.context.backends) backends.set(id, backend);
    warnings.push(...outcome.context.warnings);
    for (const { parent, ports } of outcome.accepted) {
      const target = frontend(parent.normalized.namespace, parent.normalized.name);
      if (ports.kind === 'Service') target.serviceParent = true;
      for (const port of ports.ports) {
        const byRoute = target.routes.get(port) ?? new Map<string, AttachedRoute>();
        byRoute.set(outcome.attached.routeKey, outcome.attached);
        target.routes.set(port, byRoute);
      }
    }
  }

  const listenersByPort = new Map<number, ListenerConfig[]>();
  for (const key of [...frontends.keys()].sort()) {
    const target = frontends.get(key) as Frontend;
    const { namespace, name, defaults, routes } = target;
    if (target.serviceParent) {
      // The parent Service's other ports keep Kubernetes' implicit routing to its endpoints (MeshPorts).
      for (const { port } of snapshot.get('Service', namespace, name)?.spec?.ports ?? []) {
        if (!defaults.has(port)) defaults.set(port, 'Service');
      }
    }
    const hostname = clustersetHostname(namespace, name);
    for (const port of [...new Set([...defaults.keys(), ...routes.keys()])].sort((a, b) => a - b)) {
      const entries = (): readonly RouteEntry[] => {
        const attached = routes.get(port);
        if (attached) {
          const vhosts = buildVirtualHosts(
            [...attached.values()].map((r) => ({ ...r, hostnames: [hostname] })),
          );
          return vhosts[0]?.routes ?? [];
        }
        const resolve =
          defaults.get(port) === 'Service' ? resolveServiceBackend : resolveServiceImportBackend;
        const resolution = resolve(snapshot, namespace, name, port, options.identity);
        if (!resolution.ok) return [];
        backends.set(resolution.backend.id, resolution.backend);
        warnings.push(...(resolution.warnings ?? []));
        return defaultEntries(resolution.backend.id);
      };
      const listeners = listenersByPort.get(port) ?? [];
      listeners.push({
        id: `${CLUSTERSET_GATEWAY}/${hostname}:${port}`,
        gateway: CLUSTERSET_GATEWAY,
        hostname,
        virtualHosts: [{ hostname, routes: entries() }],
      });
      listenersByPort.set(port, listeners);
    }
  }

  const sortedBackends = new Map([...backends].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return {
    listener: {
      ports: [...listenersByPort]
        .sort(([a], [b]) => a - b)
        .map(([port, listeners]) => ({ port, protocol: 'HTTP', listeners })),
    },
    backends: sortedBackends,
    routeStatuses,
    warnings,
  };
}

/** The implicit default action: every request to the port goes to its backend. */
function defaultEntries(backendId: string | undefined): readonly RouteEntry[] {
  if (backendId === undefined) return [];
  return [
    {
      route: '',
      ruleIndex: 0,
      match: { path: { kind: 'PathPrefix', value: '/' }, headers: [], queryParams: [] },
      action: {
        filters: [],
        backends: [{ weight: 1, target: { kind: 'Backend', id: backendId }, filters: [] }],
      },
    },
  ];
}

interface MeshAcceptance {
  readonly parent: MeshParent;
  readonly ports: ParentPorts;
}

function translateMeshRoute(
  snapshot: Snapshot,
  options: TranslateOptions,
  route: HTTPRoute,
  parents: readonly MeshParent[],
): RouteCoreOutcome<MeshAcceptance> {
  const routeNamespace = namespaceOf(route);
  return translateRouteCore(
    snapshot,
    options,
    route,
    parents,
    (parent): ParentVerdict<MeshAcceptance> => {
      const resolved = resolveMeshParent(snapshot, routeNamespace, parent);
      return 'problem' in resolved
        ? { problem: resolved.problem }
        : { accepted: { parent, ports: resolved } };
    },
    // GEP-1426 "Namespace boundaries": mesh routes reach backends in any namespace without a ReferenceGrant;
    // the east-west listener already serves every clusterset service, so a route widens nobody's reach.
    { referenceGrantsRequired: false },
  );
}
