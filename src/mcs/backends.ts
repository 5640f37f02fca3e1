import type { LocalIdentity } from '../gateway/options.ts';
import type { BackendCluster } from '../ir/route-table.ts';
import type { ServicePort } from '../snapshot/resources.ts';
import type { Snapshot } from '../snapshot/snapshot.ts';
import { backendProtocol } from './app-protocol.ts';
import { localClusterName } from './cluster-identity.ts';
import { collectEndpoints, type SliceSource } from './endpoints.ts';
import { buildTiers, parseTrafficDistribution, type TierName } from './traffic-distribution.ts';
import type { McsWarning } from './warnings.ts';

/**
 * A BackendCluster plus the locality of each tier (`tierNames[i]` names `tiers[i]`), for the config dump and
 * per-tier metrics. Assignable to BackendCluster; the extra field survives serialisation.
 */
export interface ResolvedBackendCluster extends BackendCluster {
  readonly tierNames: readonly TierName[];
}

/**
 * Endpoint resolution for backendRefs, shared by north-south routes and east-west services.
 * Pure: reads the Snapshot, returns IR. Reference checks (kind, ReferenceGrant) are the caller's job
 * (src/gateway); this module answers "which endpoints does this Service/ServiceImport port have".
 */
export type BackendResolution =
  | {
      readonly ok: true;
      readonly backend: ResolvedBackendCluster;
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
): BackendResolution {
  const service = snapshot.get('Service', namespace, name);
  if (!service) {
    return { ok: false, reason: 'BackendNotFound', message: `Service ${namespace}/${name} not found` };
  }
  const servicePort = service.spec?.ports?.find((p) => p.port === port);
  if (!servicePort) {
    return {
      ok: false,
      reason: 'BackendNotFound',
      message: `Service ${namespace}/${name} has no port ${port} (ports: ${portList(service.spec?.ports)})`,
    };
  }
  const id = `Service/${namespace}/${name}:${port}`;
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
  const slicePortProtocol = firstSlicePortAppProtocol(sources, servicePort.name);
  const collected = collectEndpoints(sources, {
    owner: id,
    portName: servicePort.name,
    warnOnDuplicate: false,
  });
  warnings.push(...collected.warnings);
  const parsed = parseTrafficDistribution(service.spec?.trafficDistribution, `Service/${namespace}/${name}`);
  if (parsed.warning) warnings.push(parsed.warning);
  const tiers = buildTiers(collected.endpoints, parsed.policy, identity, id);
  warnings.push(...tiers.warnings);
  return {
    ok: true,
    backend: {
      id,
      kind: 'Service',
      namespace,
      name,
      port,
      protocol: backendProtocol(servicePort.appProtocol, slicePortProtocol),
      trafficDistribution: parsed.policy,
      tiers: tiers.tiers,
      tierNames: tiers.tierNames,
    },
    warnings,
  };
}

/** GEP-1748: a ServiceImport ref means the clusterset's endpoints (multicluster.kubernetes.io/service-name slices). */
export function resolveServiceImportBackend(
  _snapshot: Snapshot,
  _namespace: string,
  _name: string,
  _port: number,
  _identity: LocalIdentity,
): BackendResolution {
  throw new Error('not implemented yet');
}

function portList(ports: readonly { readonly port: number }[] | undefined): string {
  return ports && ports.length > 0 ? ports.map((p) => p.port).join(', ') : 'none';
}

function sortByName<T extends { readonly metadata: { readonly name: string } }>(items: readonly T[]): T[] {
  return [...items].sort((a, b) =>
    a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0,
  );
}

function firstSlicePortAppProtocol(
  sources: readonly SliceSource[],
  portName: ServicePort['name'],
): string | undefined {
  for (const { slice } of sources) {
    const p = (slice.ports ?? []).find((sp) => (sp.name ?? '') === (portName ?? ''));
    if (p?.appProtocol) return p.appProtocol;
  }
  return undefined;
}
