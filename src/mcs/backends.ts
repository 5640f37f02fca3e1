import type { ObjectKey } from '../ir/config-warning.ts';
import type { BackendCluster, TrafficDistribution, UpstreamEndpoint } from '../ir/route-table.ts';
import { compareStrings } from '../snapshot/object-order.ts';
import type { EndpointSlice, EndpointSliceObjects, ServiceImport } from '../snapshot/resources.ts';
import type { Snapshot } from '../snapshot/snapshot.ts';
import { DERIVED_SERVICE_ANNOTATION, SOURCE_CLUSTER_LABEL } from '../snapshot/well-known-labels.ts';
import { backendProtocol } from './app-protocol.ts';
import { type LocalIdentity, localClusterName, regionOfSlice } from './cluster-identity.ts';
import { clusterSelections, type ResolvedSelection } from './cluster-selection.ts';
import { clusterSetIpSource, slicesAbsent } from './cluster-set-ip.ts';
import { type CollectionBase, collectEndpoints, type SliceSource } from './endpoints.ts';
import { parseHealthCheckAnnotations } from './health-check-annotations.ts';
import { indexNetworks, throughNetworkGateways, tunnelAuthority } from './networks.ts';
import { buildSelectedTiers } from './selected-tiers.ts';
import { serviceImportSpec } from './service-import-spec.ts';
import { buildTiers, endpointsWithoutZone, parseTrafficDistribution } from './traffic-distribution.ts';
import type { McsWarning } from './warnings.ts';

/**
 * Endpoint resolution for backendRefs, shared by north-south routes and east-west services.
 * Pure: reads the Snapshot, returns IR. Reference checks (kind, ReferenceGrant) are the caller's job
 * (src/gateway); this module answers "which endpoints does this Service/ServiceImport port have".
 */
export type BackendResolution =
  | {
      readonly ok: true;
      readonly backend: BackendCluster;
      /** Bad input degraded around (log line + metric by `code`); never a reason to reject the ref. */
      readonly warnings?: readonly McsWarning[];
    }
  | {
      readonly ok: false;
      /** Gateway API RouteConditionReason for ResolvedRefs=False. */
      readonly reason: 'BackendNotFound' | 'UnsupportedProtocol';
      readonly message: string;
    };

/**
 * GEP-1748: a Service ref means this cluster's endpoints (EndpointSlices labelled kubernetes.io/service-name).
 * The backendRef port must be one of `spec.ports[].port`; the slice port with the same name gives the number
 * to dial. Selector-less Services with hand-written slices and headless Services resolve the same way.
 * `spec.trafficDistribution` orders the (all local) endpoints by node and zone.
 */
export function resolveServiceBackend(
  snapshot: Snapshot,
  namespace: string,
  name: string,
  port: number,
  identity: LocalIdentity,
  transport: Transport = 'TCP',
  refresh?: Refresh,
): BackendResolution {
  const service = snapshot.get('Service', namespace, name);
  if (!service) return notFound('Service', namespace, name);
  const servicePort = portOfTransport(service.spec?.ports, port, transport);
  if (!servicePort) return noSuchPort('Service', namespace, name, port, transport, service.spec?.ports);
  const id = backendId('Service', namespace, name, port, transport);
  const warnings: McsWarning[] = [];
  if (service.spec?.type === 'ExternalName') {
    warnings.push({
      code: 'ExternalNameService',
      message: `${id}: ExternalName Services are not resolved; no endpoints`,
    });
  }
  const cluster = localClusterName(identity);
  const sources: SliceSource[] = sortByName(snapshot.slicesForService(namespace, name)).map((slice) => ({
    slice,
    cluster,
    ...(identity.region ? { region: identity.region } : {}),
  }));
  return finish({
    snapshot,
    kind: 'Service',
    namespace,
    name,
    port,
    transport,
    portName: servicePort.name,
    appProtocol: servicePort.appProtocol,
    trafficDistribution: service.spec?.trafficDistribution,
    sources,
    identity,
    warnOnDuplicate: false,
    annotations: service.metadata.annotations,
    warnings,
    ...(refresh !== undefined ? { refresh } : {}),
  });
}

/** The cluster of an MCS slice that lacks `multicluster.kubernetes.io/source-cluster`. */
export const UNKNOWN_CLUSTER = 'unknown';

/**
 * GEP-1748: a ServiceImport ref means the clusterset's endpoints. They are, merged and ordered by slice name:
 * - EndpointSlices in the import's namespace labelled `multicluster.kubernetes.io/service-name=<import>`; the
 *   cluster is the slice's `multicluster.kubernetes.io/source-cluster` label. A slice without that label is
 *   still used, attributed to the cluster `unknown` (never local, never same-region; it can only be near
 *   through the zone tier) and reported as `SliceWithoutSourceCluster`.
 * - when the annotation `multicluster.kubernetes.io/derived-service` names a Service, that Service's
 *   `kubernetes.io/service-name` slices too; their cluster is the source-cluster label, else the local cluster
 *   (the implementation derived them here).
 * The same address:port from two slices is kept once (first slice by name wins) and reported as
 * `DuplicateEndpoint`. An import with no slices resolves with no tiers: the proxy answers 503.
 */
export function resolveServiceImportBackend(
  snapshot: Snapshot,
  namespace: string,
  name: string,
  port: number,
  identity: LocalIdentity,
  transport: Transport = 'TCP',
  refresh?: Refresh,
): BackendResolution {
  const serviceImport = snapshot.get('ServiceImport', namespace, name);
  if (!serviceImport) return notFound('ServiceImport', namespace, name);
  const spec = serviceImportSpec(serviceImport);
  const importPort = portOfTransport(spec.ports, port, transport);
  if (!importPort) return noSuchPort('ServiceImport', namespace, name, port, transport, spec.ports);
  const id = backendId('ServiceImport', namespace, name, port, transport);
  const warnings: McsWarning[] = [];
  const local = localClusterName(identity);
  const sources = slicesAbsent(serviceImport)
    ? clusterSetIpSource(serviceImport, spec.ips, importPort, local, identity.region, warnings)
    : importSliceSources(snapshot, serviceImport, namespace, id, local, identity, warnings);
  return finish({
    snapshot,
    kind: 'ServiceImport',
    namespace,
    name,
    port,
    transport,
    portName: importPort.name,
    appProtocol: importPort.appProtocol,
    trafficDistribution: spec.trafficDistribution,
    sources,
    identity,
    warnOnDuplicate: true,
    annotations: serviceImport.metadata.annotations,
    warnings,
    ...(refresh !== undefined ? { refresh } : {}),
    ...(serviceImport.status?.endpointSliceObjects !== undefined
      ? { endpointSliceObjects: serviceImport.status.endpointSliceObjects }
      : {}),
  });
}

/** The import's EndpointSlices, and those of its derived Service, by slice name (see resolveServiceImportBackend). */
function importSliceSources(
  snapshot: Snapshot,
  serviceImport: ServiceImport,
  namespace: string,
  id: string,
  local: string,
  identity: LocalIdentity,
  warnings: McsWarning[],
): SliceSource[] {
  const { name } = serviceImport.metadata;
  const slices = new Map<string, { slice: EndpointSlice; derived: boolean }>();
  for (const slice of snapshot.slicesForServiceImport(namespace, name)) {
    slices.set(slice.metadata.name, { slice, derived: false });
  }
  const derivedName = serviceImport.metadata.annotations?.[DERIVED_SERVICE_ANNOTATION];
  if (derivedName) {
    if (!snapshot.get('Service', namespace, derivedName)) {
      warnings.push({
        code: 'DerivedServiceNotFound',
        message: `${id}: derived Service ${namespace}/${derivedName} (annotation ${DERIVED_SERVICE_ANNOTATION}) not found; using its slices if any`,
      });
    }
    for (const slice of snapshot.slicesForService(namespace, derivedName)) {
      if (!slices.has(slice.metadata.name)) slices.set(slice.metadata.name, { slice, derived: true });
    }
  }
  const sources: SliceSource[] = [];
  for (const sliceName of [...slices.keys()].sort()) {
    const { slice, derived } = slices.get(sliceName)!;
    let cluster = slice.metadata.labels?.[SOURCE_CLUSTER_LABEL];
    if (!cluster) {
      if (derived) {
        cluster = local;
      } else {
        cluster = UNKNOWN_CLUSTER;
        warnings.push({
          code: 'SliceWithoutSourceCluster',
          message: `${id}: EndpointSlice ${namespace}/${slice.metadata.name} has no ${SOURCE_CLUSTER_LABEL} label; its endpoints count as cluster "${UNKNOWN_CLUSTER}"`,
        });
      }
    }
    const region = regionOfSlice(snapshot, slice, cluster, identity);
    sources.push({ slice, cluster, ...(region ? { region } : {}) });
  }
  return sources;
}

interface FinishInput {
  /** For the ClusterSelectionPolicy that may target this backend (cluster-selection.ts). */
  readonly snapshot: Snapshot;
  readonly kind: 'Service' | 'ServiceImport';
  readonly namespace: string;
  readonly name: string;
  readonly port: number;
  readonly transport: Transport;
  readonly portName: string | undefined;
  readonly appProtocol: string | undefined;
  readonly trafficDistribution: string | undefined;
  readonly sources: readonly SliceSource[];
  readonly identity: LocalIdentity;
  readonly warnOnDuplicate: boolean;
  /** Of the Service or ServiceImport: health check settings (health-check-annotations.ts). */
  readonly annotations: Readonly<Record<string, string>> | undefined;
  readonly warnings: McsWarning[];
  /** A ServiceImport's `status.endpointSliceObjects`, when stated (cluster-set-ip.ts). */
  readonly endpointSliceObjects?: EndpointSliceObjects;
  readonly refresh?: Refresh;
}

/**
 * An endpoint-only refresh of a backend (backend-refresh.ts): its endpoints are collected from what changed
 * since `previous`, and what the next refresh starts from is kept with the result. Translation does not keep
 * it: only backends whose endpoints change hold one.
 */
export interface Refresh {
  readonly previous: BackendCluster;
}

/** By a refreshed backend's `tiers` (carried over by every copy of the backend): its last collection. */
const collectionBases = new WeakMap<BackendCluster['tiers'], CollectionBase>();

/** A refresh resolved `resolved` equal to `kept`, which stays in the table: the next refresh starts from it. */
export function keepCollectionBase(resolved: BackendCluster, kept: BackendCluster): void {
  const base = collectionBases.get(resolved.tiers);
  if (base !== undefined) collectionBases.set(kept.tiers, base);
}

function finish(input: FinishInput): BackendResolution {
  const { kind, namespace, name, port, transport, warnings } = input;
  const id = backendId(kind, namespace, name, port, transport);
  const previous = input.refresh && collectionBases.get(input.refresh.previous.tiers);
  const collected = collectEndpoints(
    input.sources,
    { owner: id, portName: input.portName, warnOnDuplicate: input.warnOnDuplicate },
    previous,
  );
  warnings.push(...collected.warnings);
  const endpoints = throughNetworkGateways(
    collected.endpoints,
    indexNetworks(input.snapshot, input.identity),
    tunnelAuthority(namespace, name, port),
    id,
    warnings,
  );
  const parsed = parseTrafficDistribution(input.trafficDistribution, `${kind}/${namespace}/${name}`);
  if (parsed.warning) warnings.push(parsed.warning);
  const selection = clusterSelections(input.snapshot, input.identity).forTarget(kind, namespace, name);
  const placement =
    selection === undefined
      ? localityPlacement(endpoints, parsed.policy, input.identity, id, warnings)
      : selectedPlacement(endpoints, selection, parsed.policy, input.identity, id, warnings);
  // The active probes connect over TCP or speak HTTP: a UDP port has neither to answer them.
  const healthCheck =
    transport === 'UDP' ? { disabled: true } : parseHealthCheckAnnotations(input.annotations, id, warnings);
  const owner: ObjectKey = `${kind}/${namespace}/${name}`;
  // Absent without a ClusterSetIP has said why already (ClusterSetIPMissing).
  if (
    kind === 'ServiceImport' &&
    collected.endpoints.length === 0 &&
    input.endpointSliceObjects !== 'Absent'
  ) {
    warnings.push({
      code: 'ServiceImportWithoutEndpoints',
      message: `${kind} ${namespace}/${name}: port ${port} has no endpoints in any cluster; requests to it are answered 503 until a cluster exports ready ones`,
    });
  }
  if (input.refresh !== undefined && collected.next !== undefined)
    collectionBases.set(placement.tiers, collected.next);
  return {
    ok: true,
    backend: {
      id,
      kind,
      namespace,
      name,
      port,
      protocol: backendProtocol(input.appProtocol, slicePortAppProtocol(input.sources, input.portName)),
      trafficDistribution: parsed.policy,
      ...(transport === 'UDP' ? { transport } : {}),
      ...(input.endpointSliceObjects !== undefined
        ? { endpointSliceObjects: input.endpointSliceObjects }
        : {}),
      ...placement,
      ...(healthCheck !== undefined ? { healthCheck } : {}),
    },
    // Owned by the Service or ServiceImport: an endpoint-only refresh of it replaces exactly these.
    warnings: warnings.map((warning) => ({ ...warning, owner })),
  };
}

/** Without a ClusterSelectionPolicy: the locality tiers of the target's trafficDistribution. */
function localityPlacement(
  endpoints: readonly UpstreamEndpoint[],
  policy: TrafficDistribution,
  identity: LocalIdentity,
  id: string,
  warnings: McsWarning[],
): Pick<BackendCluster, 'tiers' | 'tierNames'> {
  const built = buildTiers(endpoints, policy, identity, id);
  warnings.push(...built.warnings);
  return { tiers: built.tiers, tierNames: built.tierNames };
}

/** A ClusterSelectionPolicy's tiers replace the locality tiers (the trafficDistribution orders its first tier). */
function selectedPlacement(
  endpoints: readonly UpstreamEndpoint[],
  selection: ResolvedSelection,
  policy: TrafficDistribution,
  identity: LocalIdentity,
  id: string,
  warnings: McsWarning[],
): Pick<BackendCluster, 'tiers' | 'tierNames' | 'tierOverprovisioning' | 'clusterSelection'> {
  const withoutZone = endpointsWithoutZone(endpoints, policy, id);
  if (withoutZone) warnings.push(withoutZone);
  const selected = buildSelectedTiers(endpoints, selection, policy, identity);
  return {
    tiers: selected.tiers,
    tierNames: selected.tierNames,
    tierOverprovisioning: selected.tierOverprovisioning,
    clusterSelection: {
      policy: selection.policy,
      fallback: selection.fallback,
      outsideEndpoints: selected.outsideEndpoints,
      ...(selection.sessionPinning !== undefined ? { sessionPinning: selection.sessionPinning } : {}),
    },
  };
}

/** The transport a Service or ServiceImport port speaks (ServicePort.protocol, default TCP). */
export type Transport = 'TCP' | 'UDP';

/**
 * The port of that number speaking `transport`: a Service may have 53/UDP beside 53/TCP. For TCP, a port whose
 * protocol is unset or TCP first, then any port of that number (HTTP routes have always resolved by number).
 */
function portOfTransport<P extends { readonly port: number; readonly protocol?: string }>(
  ports: readonly P[] | undefined,
  port: number,
  transport: Transport,
): P | undefined {
  const same = (ports ?? []).filter((p) => p.port === port);
  const speaking = same.find((p) => (p.protocol ?? 'TCP') === transport);
  return transport === 'UDP' ? speaking : (speaking ?? same[0]);
}

/** A UDP backend is a cluster of its own: its endpoints are the UDP slice ports, never probed. */
function backendId(
  kind: string,
  namespace: string,
  name: string,
  port: number,
  transport: Transport,
): string {
  return `${kind}/${namespace}/${name}:${port}${transport === 'UDP' ? '/UDP' : ''}`;
}

function notFound(kind: 'Service' | 'ServiceImport', namespace: string, name: string): BackendResolution {
  return { ok: false, reason: 'BackendNotFound', message: `${kind} ${namespace}/${name} not found` };
}

function noSuchPort(
  kind: 'Service' | 'ServiceImport',
  namespace: string,
  name: string,
  port: number,
  transport: Transport,
  ports: readonly { readonly port: number }[] | undefined,
): BackendResolution {
  const list = ports && ports.length > 0 ? ports.map((p) => p.port).join(', ') : 'none';
  return {
    ok: false,
    reason: 'BackendNotFound',
    message: `${kind} ${namespace}/${name} has no ${transport === 'UDP' ? 'UDP ' : ''}port ${port} (ports: ${list})`,
  };
}

function sortByName<T extends { readonly metadata: { readonly name: string } }>(items: readonly T[]): T[] {
  return [...items].sort((a, b) => compareStrings(a.metadata.name, b.metadata.name));
}

/** The first appProtocol a matching slice port states (the EndpointSlice controller copies the Service's). */
function slicePortAppProtocol(
  sources: readonly SliceSource[],
  portName: string | undefined,
): string | undefined {
  for (const { slice } of sources) {
    const p = (slice.ports ?? []).find((sp) => (sp.name ?? '') === (portName ?? ''));
    if (p?.appProtocol) return p.appProtocol;
  }
  return undefined;
}
