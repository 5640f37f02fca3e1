import { isIP } from 'node:net';
import { compareStrings } from '../snapshot/object-order.ts';
import type { Endpoint, EndpointPort, EndpointSlice, Service } from '../snapshot/resources.ts';
import {
  MANAGED_BY_LABEL,
  MCS_SERVICE_NAME_LABEL,
  SERVICE_NAME_LABEL,
  SOURCE_CLUSTER_LABEL,
  TOPOLOGY_LABEL_PREFIX,
  ZONE_LABEL,
} from '../snapshot/well-known-labels.ts';
import { condition, type ExportStatus, FLEET_MANAGER, generationOf } from './derivation-types.ts';
import type { MemberView, ServiceExport } from './member-view.ts';

/**
 * Per member: which Services are exported, their slices relabelled as MCS slices. Cached per (immutable) view
 * and per EndpointSlice object, so a member's new view costs only its changed slices.
 */

export interface ExportedService {
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

export interface IndexedMember {
  readonly exports: readonly ExportedService[];
  readonly problems: readonly string[];
}

const memberCache = new WeakMap<MemberView, IndexedMember>();

export function indexMember(member: MemberView): IndexedMember {
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
    slices.sort((a, b) => compareStrings(a.metadata.name, b.metadata.name));
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

function keyOf(meta: { readonly name: string; readonly namespace?: string }): string {
  return `${meta.namespace ?? 'default'}/${meta.name}`;
}

function sameRecord(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean {
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  return ka.every((k) => a[k] === b[k]);
}
