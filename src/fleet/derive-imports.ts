import { isIP } from 'node:net';
import type {
  AnyResource,
  ClusterProfile,
  Condition,
  Endpoint,
  EndpointPort,
  EndpointSlice,
  Service,
  ServiceImport,
  ServiceImportPort,
  ServicePort,
} from '../snapshot/resources.ts';
import {
  MANAGED_BY_LABEL,
  MCS_SERVICE_NAME_LABEL,
  SERVICE_NAME_LABEL,
  SOURCE_CLUSTER_LABEL,
  TOPOLOGY_LABEL_PREFIX,
  ZONE_LABEL,
} from '../snapshot/well-known-labels.ts';
import type { MemberView, ServiceExport } from './member-view.ts';

/**
 * ServiceImports derived from the member clusters' ServiceExports, as KEP-1645 (Multi-Cluster Services) specifies.
 * Pure: member views in, objects and reports out. The work per member is cached on its (immutable) view and per
 * EndpointSlice object, so a change in one member costs that member's re-indexing plus a merge across exports,
 * never a re-derivation of every member's slices.
 */

const CLUSTER_ID_PROPERTY = 'cluster.clusterset.k8s.io';

/** Marks every object this module makes (slices' managed-by, profiles' app.kubernetes.io/managed-by). */
export const FLEET_MANAGER = 'clusterset-gateway-fleet';
/** Where the derived ClusterProfiles that carry members' properties live. */
export const FLEET_PROFILE_NAMESPACE = 'clusterset-gateway-fleet';

/** KEP-1645 / mcs-api ServiceExport condition reasons for `Conflict`. */
export type ConflictReason =
  | 'PortConflict'
  | 'TypeConflict'
  | 'SessionAffinityConflict'
  | 'SessionAffinityConfigConflict'
  | 'TrafficDistributionConflict';

/** One ServiceExport's computed status, as it would be written to the member. */
export interface ExportStatus {
  readonly cluster: string;
  readonly namespace: string;
  readonly name: string;
  readonly generation?: number;
  /** `Valid`, `Ready`, `Conflict` (the last only for a valid export). */
  readonly conditions: readonly Condition[];
}

export interface ImportConflict {
  readonly cluster: string;
  readonly reasons: readonly ConflictReason[];
  readonly message: string;
}

/** A derived ServiceImport, for operators: where its spec came from and who disagrees. */
export interface DerivedImport {
  readonly namespace: string;
  readonly name: string;
  /** `members`: derived from the oldest export; `local ServiceImport`: a user's object of that name wins. */
  readonly specFrom: 'members' | 'local ServiceImport';
  /** The cluster whose export is oldest: its Service's properties are the import's. */
  readonly oldestExport: string;
  /** Clusters whose valid export contributes endpoints, oldest export first. */
  readonly clusters: readonly string[];
  readonly endpoints: number;
  readonly spec: ServiceImport['spec'];
  readonly conflicts: readonly ImportConflict[];
}

export interface FleetDerivation {
  /** Derived ServiceImports (only where no local one exists), MCS EndpointSlices and members' ClusterProfiles. */
  readonly objects: readonly AnyResource[];
  /**
   * Clusters the fleet speaks for: the local source's MCS slices labelled with one of these source clusters are
   * replaced by the members' own (synced and stale members only: a member still connecting has said nothing).
   */
  readonly authoritativeClusters: ReadonlySet<string>;
  readonly imports: readonly DerivedImport[];
  readonly exports: readonly ExportStatus[];
  /** Members' objects (or parts of them) left out, each naming the member and the object. */
  readonly problems: readonly string[];
}

/** Whether the local source has a ServiceImport object `namespace/name`. */
export type LocalImportLookup = (namespace: string, name: string) => boolean;

export function deriveImports(
  members: readonly MemberView[],
  hasLocalImport: LocalImportLookup,
): FleetDerivation {
  const byKey = new Map<string, ExportedService[]>();
  const authoritativeClusters = new Set<string>();
  const objects: AnyResource[] = [];
  const exports: ExportStatus[] = [];
  const problems: string[] = [];
  for (const member of [...members].sort((a, b) => compare(a.name, b.name))) {
    if (member.state === 'refused') continue;
    if (member.state === 'synced' || member.state === 'stale') authoritativeClusters.add(member.name);
    const profile = memberProfile(member);
    if (profile) objects.push(profile);
    const indexed = indexMember(member);
    problems.push(...indexed.problems);
    for (const exported of indexed.exports) {
      if (exported.invalid) {
        exports.push(exported.invalid);
        continue;
      }
      const list = byKey.get(exported.key);
      if (list) list.push(exported);
      else byKey.set(exported.key, [exported]);
    }
  }

  const imports: DerivedImport[] = [];
  for (const key of [...byKey.keys()].sort()) {
    const constituents = (byKey.get(key) as ExportedService[]).sort(oldestFirst);
    const merged = mergeExports(constituents);
    const oldest = constituents[0] as ExportedService;
    const local = hasLocalImport(oldest.namespace, oldest.name);
    if (!local) objects.push(merged.serviceImport);
    let endpoints = 0;
    for (const exported of constituents) {
      for (const slice of exported.slices) {
        objects.push(slice);
        endpoints += slice.endpoints?.length ?? 0;
      }
    }
    imports.push({
      namespace: oldest.namespace,
      name: oldest.name,
      specFrom: local ? 'local ServiceImport' : 'members',
      oldestExport: oldest.cluster,
      clusters: constituents.map((e) => e.cluster),
      endpoints,
      spec: merged.serviceImport.spec,
      conflicts: merged.conflicts,
    });
    exports.push(...merged.statuses);
  }
  exports.sort((a, b) => compare(statusKey(a), statusKey(b)));
  problems.sort();
  return { objects, authoritativeClusters, imports, exports, problems };
}

// ---- per member: which Services are exported, their slices relabelled (cached per view and per slice) ----

interface ExportedService {
  readonly key: string;
  readonly cluster: string;
  readonly namespace: string;
  readonly name: string;
  readonly export: ServiceExport;
  readonly service: Service;
  readonly slices: readonly EndpointSlice[];
  /** Set when the export cannot be imported (no Service, ExternalName): its status, and nothing else. */
  readonly invalid?: ExportStatus;
}

interface IndexedMember {
  readonly exports: readonly ExportedService[];
  readonly problems: readonly string[];
}

const memberCache = new WeakMap<MemberView, IndexedMember>();

function indexMember(member: MemberView): IndexedMember {
  const cached = memberCache.get(member);
  if (cached) return cached;
  const services = new Map<string, Service>();
  for (const service of member.services) services.set(keyOf(service.metadata), service);
  const slicesByService = new Map<string, EndpointSlice[]>();
  for (const slice of member.endpointSlices) {
    const service = slice.metadata.labels?.[SERVICE_NAME_LABEL];
    if (!service) continue;
    const key = `${slice.metadata.namespace ?? 'default'}/${service}`;
    const list = slicesByService.get(key);
    if (list) list.push(slice);
    else slicesByService.set(key, [slice]);
  }
  const labels = clusterLabels(member);
  const out: ExportedService[] = [];
  const problems: string[] = [];
  for (const exp of member.serviceExports) {
    const namespace = exp.metadata.namespace ?? 'default';
    const name = exp.metadata.name;
    const key = `${namespace}/${name}`;
    const service = services.get(key);
    const base = { key, cluster: member.name, namespace, name, export: exp };
    const invalid = invalidReason(service, member.name, key);
    if (invalid || !service) {
      const status: ExportStatus = {
        cluster: member.name,
        namespace,
        name,
        ...generationOf(exp),
        conditions: [
          condition('Valid', 'False', invalid?.reason ?? 'NoService', invalid?.message ?? ''),
          condition('Ready', 'False', 'Failed', 'not exported: the export is not valid'),
        ],
      };
      out.push({ ...base, service: service as Service, slices: [], invalid: status });
      continue;
    }
    const slices: EndpointSlice[] = [];
    for (const slice of slicesByService.get(key) ?? []) {
      const derived = relabel(slice, member.name, name, labels);
      if (derived.problem) problems.push(derived.problem);
      if (derived.slice) slices.push(derived.slice);
    }
    slices.sort((a, b) => compare(a.metadata.name, b.metadata.name));
    out.push({ ...base, service, slices });
  }
  const indexed = { exports: out, problems };
  memberCache.set(member, indexed);
  return indexed;
}

function invalidReason(
  service: Service | undefined,
  cluster: string,
  key: string,
): { reason: string; message: string } | undefined {
  if (!service) return { reason: 'NoService', message: `cluster ${cluster} has no Service ${key} to export` };
  if (service.spec?.type === 'ExternalName')
    return {
      reason: 'InvalidServiceType',
      message: `Service ${key} in cluster ${cluster} is of type ExternalName, which cannot be exported`,
    };
  return undefined;
}

/** The member's `topology.kubernetes.io/*` properties (zone excepted), copied onto its slices for locality. */
function clusterLabels(member: MemberView): Readonly<Record<string, string>> {
  const labels: Record<string, string> = {};
  for (const [name, value] of Object.entries(member.properties)) {
    if (name.startsWith(TOPOLOGY_LABEL_PREFIX) && name !== ZONE_LABEL && value !== '') labels[name] = value;
  }
  return labels;
}

interface RelabelledSlice {
  readonly cluster: string;
  readonly service: string;
  readonly clusterLabels: Readonly<Record<string, string>>;
  readonly result: Relabelled;
}

interface Relabelled {
  /** Absent when nothing of the slice can be used. */
  readonly slice?: EndpointSlice;
  readonly problem?: string;
}

/** The API server's own cap (discovery.k8s.io/v1 `endpoints` maxItems). */
export const MAX_ENDPOINTS_PER_SLICE = 1000;

const sliceCache = new WeakMap<EndpointSlice, RelabelledSlice>();

/**
 * A member's slice as an MCS slice of the import: `multicluster.kubernetes.io/service-name` and `source-cluster`
 * instead of `kubernetes.io/service-name` (which would make it a local Service's), named apart from every other
 * cluster's; endpoints (zone, nodeName, hints, conditions), ports and address type untouched.
 */
function relabel(
  slice: EndpointSlice,
  cluster: string,
  service: string,
  topology: Readonly<Record<string, string>>,
): Relabelled {
  const cached = sliceCache.get(slice);
  if (
    cached &&
    cached.cluster === cluster &&
    cached.service === service &&
    sameRecord(cached.clusterLabels, topology)
  )
    return cached.result;
  const checked = checkSlice(slice, cluster);
  const labels: Record<string, string> = {};
  for (const [name, value] of Object.entries(slice.metadata.labels ?? {})) {
    if (name !== SERVICE_NAME_LABEL && name !== MANAGED_BY_LABEL) labels[name] = value;
  }
  for (const [name, value] of Object.entries(topology)) if (!(name in labels)) labels[name] = value;
  labels[MCS_SERVICE_NAME_LABEL] = service;
  labels[SOURCE_CLUSTER_LABEL] = cluster;
  labels[MANAGED_BY_LABEL] = FLEET_MANAGER;
  const derived: EndpointSlice = {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name: derivedSliceName(cluster, slice.metadata.name),
      namespace: slice.metadata.namespace ?? 'default',
      labels,
      ...(slice.metadata.generation !== undefined ? { generation: slice.metadata.generation } : {}),
    },
    ...(slice.addressType ? { addressType: slice.addressType } : {}),
    endpoints: checked.endpoints,
    ports: checked.ports,
  };
  const result: Relabelled = {
    ...(checked.endpoints.length > 0 || (slice.endpoints ?? []).length === 0 ? { slice: derived } : {}),
    ...(checked.problem ? { problem: checked.problem } : {}),
  };
  sliceCache.set(slice, { cluster, service, clusterLabels: topology, result });
  return result;
}

/**
 * A member's API server should have validated its slices; one that did not (or a proxy that mangled them) costs
 * only the endpoints that cannot be used: not an array, no address, an address that is not of the slice's type,
 * beyond the API's 1,000 per slice.
 */
function checkSlice(
  slice: EndpointSlice,
  cluster: string,
): { endpoints: readonly Endpoint[]; ports: readonly EndpointPort[]; problem?: string } {
  const where = `cluster ${cluster}: EndpointSlice ${slice.metadata.namespace ?? 'default'}/${slice.metadata.name}`;
  const raw: unknown = slice.endpoints ?? [];
  const rawPorts: unknown = slice.ports ?? [];
  if (!Array.isArray(raw) || !Array.isArray(rawPorts))
    return {
      endpoints: [],
      ports: [],
      problem: `${where}: endpoints and ports must be lists; slice ignored`,
    };
  const ports = rawPorts.filter(
    (p): p is EndpointPort =>
      typeof p === 'object' && p !== null && (p.port === undefined || Number.isInteger(p.port)),
  );
  const family = slice.addressType === 'IPv6' ? 6 : slice.addressType === 'FQDN' ? 0 : 4;
  const endpoints: Endpoint[] = [];
  let bad = 0;
  for (const e of raw as unknown[]) {
    const addresses = (e as { addresses?: unknown } | null)?.addresses;
    const first = Array.isArray(addresses) ? addresses[0] : undefined;
    const usable = typeof first === 'string' && (family === 0 ? first !== '' : isIP(first) === family);
    if (!usable) bad++;
    else if (endpoints.length < MAX_ENDPOINTS_PER_SLICE) endpoints.push(e as Endpoint);
  }
  const over = raw.length - bad - endpoints.length;
  const notes = [
    ...(bad > 0
      ? [`${bad} endpoint(s) without a valid ${slice.addressType ?? 'IPv4'} address left out`]
      : []),
    ...(over > 0 ? [`${over} endpoint(s) beyond ${MAX_ENDPOINTS_PER_SLICE} per slice left out`] : []),
    ...(ports.length < rawPorts.length
      ? [`${rawPorts.length - ports.length} malformed port(s) left out`]
      : []),
  ];
  return { endpoints, ports, ...(notes.length > 0 ? { problem: `${where}: ${notes.join('; ')}` } : {}) };
}

/** Unique per cluster: two members' slices of one name stay apart. */
export function derivedSliceName(cluster: string, slice: string): string {
  return `${cluster}.${slice}`;
}

// ---- across members: one ServiceImport per namespace/name, oldest export wins ----

/** KEP-1645: conflicts resolve by ServiceExport creationTimestamp (oldest first), then by cluster name. */
function oldestFirst(a: ExportedService, b: ExportedService): number {
  const ta = createdAt(a.export);
  const tb = createdAt(b.export);
  if (ta !== tb) return ta < tb ? -1 : 1;
  return compare(a.cluster, b.cluster);
}

/** Milliseconds since the epoch; an export without a (parsable) creationTimestamp counts as the newest. */
function createdAt(exp: ServiceExport): number {
  const parsed = Date.parse(exp.metadata.creationTimestamp ?? '');
  return Number.isNaN(parsed) ? Number.POSITIVE_INFINITY : parsed;
}

interface Merged {
  readonly serviceImport: ServiceImport;
  readonly conflicts: readonly ImportConflict[];
  readonly statuses: readonly ExportStatus[];
}

function mergeExports(constituents: readonly ExportedService[]): Merged {
  const oldest = constituents[0] as ExportedService;
  const winner = oldest.service.spec ?? {};
  const type = headless(oldest.service) ? 'Headless' : 'ClusterSetIP';
  const affinity = winner.sessionAffinity ?? 'None';
  const affinityConfig = JSON.stringify(winner.sessionAffinityConfig ?? null);
  const distribution = winner.trafficDistribution ?? '';
  // Ports: the union by name; where a name means different port/protocol/appProtocol, the oldest export's wins.
  const ports = new Map<string, { port: ServiceImportPort; cluster: string }>();
  const conflicts: ImportConflict[] = [];
  for (const exported of constituents) {
    const spec = exported.service.spec ?? {};
    const reasons = new Set<ConflictReason>();
    const details: string[] = [];
    const servicePorts: readonly unknown[] = Array.isArray(spec.ports) ? spec.ports : [];
    for (const p of servicePorts) {
      if (!isServicePort(p)) continue;
      const port = importPort(p);
      const name = port.name ?? '';
      const held = ports.get(name);
      if (!held) ports.set(name, { port, cluster: exported.cluster });
      else if (portText(held.port) !== portText(port)) {
        reasons.add('PortConflict');
        details.push(
          `port ${JSON.stringify(name)} is ${portText(port)} here but ${portText(held.port)} in cluster ${held.cluster}`,
        );
      }
    }
    if (exported === oldest) continue;
    const theirType = headless(exported.service) ? 'Headless' : 'ClusterSetIP';
    if (theirType !== type) {
      reasons.add('TypeConflict');
      details.push(`type is ${theirType} here but ${type} in cluster ${oldest.cluster}`);
    }
    if ((spec.sessionAffinity ?? 'None') !== affinity) {
      reasons.add('SessionAffinityConflict');
      details.push(
        `sessionAffinity is ${spec.sessionAffinity ?? 'None'} here but ${affinity} in cluster ${oldest.cluster}`,
      );
    } else if (JSON.stringify(spec.sessionAffinityConfig ?? null) !== affinityConfig) {
      reasons.add('SessionAffinityConfigConflict');
      details.push(`sessionAffinityConfig differs from cluster ${oldest.cluster}'s`);
    }
    if ((spec.trafficDistribution ?? '') !== distribution) {
      reasons.add('TrafficDistributionConflict');
      details.push(
        `trafficDistribution is ${spec.trafficDistribution || '(unset)'} here but ${distribution || '(unset)'} in cluster ${oldest.cluster}`,
      );
    }
    if (reasons.size > 0)
      conflicts.push({
        cluster: exported.cluster,
        reasons: [...reasons],
        message: `${details.join('; ')}; the oldest export (cluster ${oldest.cluster}) wins`,
      });
  }

  const spec: ServiceImport['spec'] = {
    type,
    ports: [...ports.values()].map((p) => p.port),
    sessionAffinity: affinity,
    ...(distribution ? { trafficDistribution: distribution } : {}),
  };
  const serviceImport: ServiceImport = {
    apiVersion: 'multicluster.x-k8s.io/v1alpha1',
    kind: 'ServiceImport',
    metadata: {
      name: oldest.name,
      namespace: oldest.namespace,
      labels: { 'app.kubernetes.io/managed-by': FLEET_MANAGER },
    },
    spec,
  };

  // The condition is raised on the conflicting exports and, as mcs-api recommends, on the oldest one too.
  const conflictOf = new Map(conflicts.map((c) => [c.cluster, c]));
  const allReasons = [...new Set(conflicts.flatMap((c) => c.reasons))];
  const statuses = constituents.map((exported): ExportStatus => {
    const own = conflictOf.get(exported.cluster);
    let conflict = condition('Conflict', 'False', 'NoConflicts', 'no conflicts with the other exports');
    if (own) conflict = condition('Conflict', 'True', own.reasons.join(','), own.message);
    else if (exported === oldest && conflicts.length > 0)
      conflict = condition(
        'Conflict',
        'True',
        allReasons.join(','),
        `the exports of ${conflicts.map((c) => c.cluster).join(', ')} disagree with this one; this one is the oldest and wins`,
      );
    return {
      cluster: exported.cluster,
      namespace: exported.namespace,
      name: exported.name,
      ...generationOf(exported.export),
      conditions: [
        condition('Valid', 'True', 'Valid', 'the Service exists and can be exported'),
        condition(
          'Ready',
          'True',
          'Exported',
          `imported as ServiceImport ${exported.key} with the endpoints of ${constituents.length} cluster(s)`,
        ),
        conflict,
      ],
    };
  });
  return { serviceImport, conflicts, statuses };
}

function headless(service: Service): boolean {
  return service.spec?.clusterIP === 'None';
}

function isServicePort(p: unknown): p is ServicePort {
  return typeof p === 'object' && p !== null && Number.isInteger((p as { port?: unknown }).port);
}

function importPort(port: ServicePort): ServiceImportPort {
  return {
    ...(port.name ? { name: port.name } : {}),
    protocol: port.protocol ?? 'TCP',
    ...(port.appProtocol ? { appProtocol: port.appProtocol } : {}),
    port: port.port,
  };
}

function portText(port: ServiceImportPort): string {
  return `${port.port}/${port.protocol ?? 'TCP'}${port.appProtocol ? ` (${port.appProtocol})` : ''}`;
}

// ---- members' properties, as ClusterProfiles that locality and cluster selection already read ----

const profileCache = new WeakMap<MemberView, ClusterProfile | null>();

/**
 * A member's properties reach locality tiers and ClusterSelectionPolicy as a ClusterProfile named after it (see
 * src/mcs/cluster-properties.ts), whether it came from a kubeconfig file or a hub's profile.
 */
function memberProfile(member: MemberView): ClusterProfile | undefined {
  const cached = profileCache.get(member);
  if (cached !== undefined) return cached ?? undefined;
  const properties = Object.entries(member.properties)
    .filter(([name, value]) => name !== CLUSTER_ID_PROPERTY && value !== '')
    .map(([name, value]) => ({ name, value }));
  const profile: ClusterProfile | null =
    properties.length === 0
      ? null
      : {
          apiVersion: 'multicluster.x-k8s.io/v1alpha1',
          kind: 'ClusterProfile',
          metadata: {
            name: member.name,
            namespace: FLEET_PROFILE_NAMESPACE,
            labels: { 'app.kubernetes.io/managed-by': FLEET_MANAGER },
          },
          status: { properties: [{ name: CLUSTER_ID_PROPERTY, value: member.name }, ...properties] },
        };
  profileCache.set(member, profile);
  return profile ?? undefined;
}

// ---- helpers ----

function condition(type: string, status: Condition['status'], reason: string, message: string): Condition {
  return { type, status, reason, message };
}

function generationOf(exp: ServiceExport): { generation?: number } {
  return exp.metadata.generation !== undefined ? { generation: exp.metadata.generation } : {};
}

function keyOf(meta: { readonly name: string; readonly namespace?: string }): string {
  return `${meta.namespace ?? 'default'}/${meta.name}`;
}

function statusKey(s: ExportStatus): string {
  return `${s.namespace}/${s.name}/${s.cluster}`;
}

function sameRecord(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean {
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  return ka.every((k) => a[k] === b[k]);
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
