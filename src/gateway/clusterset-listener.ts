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
import { compareStrings } from '../snapshot/object-order.ts';
import type { GRPCRoute, HTTPRoute } from '../snapshot/resources.ts';
import type { Snapshot } from '../snapshot/snapshot.ts';
import { keyOf, namespaceOf } from './defaults.ts';
import { type MeshParent, meshParentsOf, type ParentPorts, resolveMeshParent } from './mesh-parents.ts';
import { clusterIPsOf, clusterLocalHostname, isMeshService } from './mesh-services.ts';
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

/** One name the listener answers to, on each of its ports. */
interface Frontend {
  readonly namespace: string;
  readonly name: string;
  readonly hostname: string;
  /** Port to what its implicit default action sends to. */
  readonly defaults: Map<number, 'ServiceImport' | 'Service'>;
  /** Port to the GAMMA routes attached to it, by `kind/namespace/name`. */
  readonly routes: Map<number, Map<string, AttachedRoute>>;
}

/** The clusterset side of a translation: the east-west listener and what it sends to. */
export interface ClustersetListenerResult {
  readonly listener: ClustersetListenerConfig;
  /** By id, sorted; the Gateway side's backend of the same id is the same cluster. */
  readonly backends: ReadonlyMap<string, BackendCluster>;
  /** Status of each route with mesh parents (those parents only), by `kind/namespace/name`. */
  readonly routeStatuses: ReadonlyMap<string, StatusUpdate>;
  readonly warnings: readonly McsWarning[];
}

/**
 * The clusterset listener step of translate() (TranslateOptions.eastWest), a peer of the Gateway listeners step.
 * Two kinds of names, each served on each of its ports by an implicit default action (locality tiers as always):
 *
 * - `<name>.<ns>.svc.cluster.local` (and the Service's ClusterIPs) for every Service of the mesh
 *   (isMeshService), sending to the Service's own endpoints (GEP-1748: a Service means this cluster's);
 * - `<name>.<ns>.svc.clusterset.local` for every ServiceImport (its ports, to the clusterset's endpoints) and
 *   for every mesh Service that has no ServiceImport (its ports, to its local endpoints: the clusterset's
 *   endpoints of a service only this cluster has).
 *
 * GAMMA (GEP-1426): an HTTPRoute or GRPCRoute whose parentRef is a core Service applies to both names of that
 * Service; one whose parentRef is a ServiceImport kind applies to the clusterset name. It applies on the
 * parentRef port or every port of the parent, and its rules *replace* the default action there ("When you
 * create an xRoute targeting a service as a parentRef you are replacing that implicit logic - not adding to
 * it", GEP-1426 "Route presence"): a request that matches no rule gets 404, as on a Gateway. Ports the routes
 * do not cover keep the default (MeshPorts). Routes on one port merge by the usual match precedence. A mesh
 * route's `spec.hostnames` is ignored (GEP-1426 "hostnames field": SHOULD NOT infer functionality). The routes
 * get a `status.parents` entry per mesh parentRef, merged with their Gateway parents' entries.
 */
export function translateClustersetListener(
  snapshot: Snapshot,
  options: TranslateOptions,
): ClustersetListenerResult {
  const backends = new Map<string, BackendCluster>();
  const warnings: McsWarning[] = [];
  const clusterset = new Map<string, Frontend>();
  const clusterLocal = new Map<string, Frontend>();
  const frontendIn = (
    frontends: Map<string, Frontend>,
    namespace: string,
    name: string,
    hostname: string,
  ): Frontend => {
    const key = `${namespace}/${name}`;
    let found = frontends.get(key);
    if (!found) {
      found = { namespace, name, hostname, defaults: new Map(), routes: new Map() };
      frontends.set(key, found);
    }
    return found;
  };
  const clustersetFrontend = (namespace: string, name: string): Frontend =>
    frontendIn(clusterset, namespace, name, clustersetHostname(namespace, name));

  for (const serviceImport of snapshot.list('ServiceImport')) {
    const namespace = namespaceOf(serviceImport);
    const target = clustersetFrontend(namespace, serviceImport.metadata.name);
    for (const { port } of serviceImportSpec(serviceImport).ports ?? [])
      target.defaults.set(port, 'ServiceImport');
  }

  const addresses: { address: string; hostname: string; createdAt: string }[] = [];
  const meshServices = new Set<string>();
  for (const service of snapshot.list('Service')) {
    if (!isMeshService(snapshot, options, service)) continue;
    const namespace = namespaceOf(service);
    const { name } = service.metadata;
    meshServices.add(`${namespace}/${name}`);
    const hostname = clusterLocalHostname(namespace, name);
    const local = frontendIn(clusterLocal, namespace, name, hostname);
    const imported = clusterset.has(`${namespace}/${name}`);
    const global = imported ? undefined : clustersetFrontend(namespace, name);
    for (const { port } of service.spec?.ports ?? []) {
      local.defaults.set(port, 'Service');
      global?.defaults.set(port, 'Service');
    }
    const createdAt = service.metadata.creationTimestamp ?? '';
    for (const address of clusterIPsOf(service)) addresses.push({ address, hostname, createdAt });
  }

  const routeStatuses = new Map<string, StatusUpdate>();
  const routes: (HTTPRoute | GRPCRoute)[] = [...snapshot.httpRoutes, ...snapshot.grpcRoutes];
  for (const route of routes) {
    const parents = meshParentsOf(route, options);
    if (parents.length === 0) continue;
    const outcome = translateMeshRoute(snapshot, options, route, parents, meshServices);
    const routeKey = `${route.kind}/${keyOf(route)}`;
    routeStatuses.set(routeKey, outcome.status);
    if (outcome.accepted.length === 0) continue;
    for (const [id, backend] of outcome.context.backends) backends.set(id, backend);
    warnings.push(...outcome.context.warnings);
    for (const { parent, ports } of outcome.accepted) {
      const { namespace, name } = parent.normalized;
      const targets = [clustersetFrontend(namespace, name)];
      if (ports.kind === 'Service') {
        targets.push(frontendIn(clusterLocal, namespace, name, clusterLocalHostname(namespace, name)));
      }
      for (const target of targets) {
        for (const port of ports.ports) {
          const byRoute = target.routes.get(port) ?? new Map<string, AttachedRoute>();
          byRoute.set(routeKey, outcome.attached);
          target.routes.set(port, byRoute);
        }
        if (ports.kind === 'Service') {
          // The parent Service's other ports keep Kubernetes' implicit routing to its endpoints (MeshPorts).
          for (const { port } of snapshot.get('Service', namespace, name)?.spec?.ports ?? []) {
            if (!target.defaults.has(port)) target.defaults.set(port, 'Service');
          }
        }
      }
    }
  }

  const listenersByPort = new Map<number, ListenerConfig[]>();
  const resolved = new Map<string, string | undefined>();
  const emit = (target: Frontend): void => {
    const { namespace, name, hostname, defaults, routes: attachedByPort } = target;
    for (const port of [...new Set([...defaults.keys(), ...attachedByPort.keys()])].sort((a, b) => a - b)) {
      const entries = (): readonly RouteEntry[] => {
        const attached = attachedByPort.get(port);
        if (attached) {
          const vhosts = buildVirtualHosts(
            [...attached.values()].map((r) => ({ ...r, hostnames: [hostname] })),
          );
          return vhosts[0]?.routes ?? [];
        }
        const kind = defaults.get(port) ?? 'Service';
        // A Service's cluster-local and clusterset names share one backend: resolve its endpoints once.
        const key = `${kind}/${namespace}/${name}:${port}`;
        let backendId = resolved.get(key);
        if (!resolved.has(key)) {
          const resolve = kind === 'Service' ? resolveServiceBackend : resolveServiceImportBackend;
          const resolution = resolve(snapshot, namespace, name, port, options.identity);
          backendId = resolution.ok ? resolution.backend.id : undefined;
          resolved.set(key, backendId);
          if (resolution.ok) {
            backends.set(resolution.backend.id, resolution.backend);
            warnings.push(...(resolution.warnings ?? []));
          }
        }
        return defaultEntries(backendId);
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
  };
  for (const frontends of [clusterset, clusterLocal]) {
    for (const key of [...frontends.keys()].sort()) emit(frontends.get(key) as Frontend);
  }

  const sortedBackends = new Map([...backends].sort(([a], [b]) => compareStrings(a, b)));
  // Two Services claiming one ClusterIP (hand-written manifests; an API server refuses the second): the older
  // keeps it, as in Gateway API conflicts, then the first by namespace/name (the order Services were listed in).
  const owners = new Map<string, { address: string; hostname: string; createdAt: string }>();
  for (const entry of addresses) {
    const owner = owners.get(entry.address);
    if (
      owner === undefined ||
      (entry.createdAt !== '' && (owner.createdAt === '' || entry.createdAt < owner.createdAt))
    ) {
      owners.set(entry.address, entry);
    }
  }
  const uniqueAddresses = [...owners.values()].map(({ address, hostname }) => ({ address, hostname }));
  return {
    listener: {
      ports: [...listenersByPort]
        .sort(([a], [b]) => a - b)
        .map(([port, listeners]) => ({ port, protocol: 'HTTP', listeners })),
      ...(uniqueAddresses.length > 0 ? { addresses: uniqueAddresses } : {}),
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
  route: HTTPRoute | GRPCRoute,
  parents: readonly MeshParent[],
  meshServices: ReadonlySet<string>,
): RouteCoreOutcome<MeshAcceptance> {
  const routeNamespace = namespaceOf(route);
  return translateRouteCore(
    snapshot,
    options,
    route,
    parents,
    (parent): ParentVerdict<MeshAcceptance> => {
      const resolved = resolveMeshParent(snapshot, routeNamespace, parent, meshServices);
      return 'problem' in resolved
        ? { problem: resolved.problem }
        : { accepted: { parent, ports: resolved } };
    },
    // GEP-1426 "Namespace boundaries": mesh routes reach backends in any namespace without a ReferenceGrant;
    // the east-west listener already serves every clusterset service, so a route widens nobody's reach.
    { referenceGrantsRequired: false },
  );
}
