import { compareStrings } from '../snapshot/object-order.ts';
import type { Service, ServiceImport, ServiceImportPort, ServicePort } from '../snapshot/resources.ts';
import {
  type ConflictReason,
  condition,
  type ExportStatus,
  FLEET_MANAGER,
  generationOf,
  type ImportConflict,
} from './derivation-types.ts';
import type { ExportedService } from './export-index.ts';
import type { ServiceExport } from './member-view.ts';

/** Across members: one ServiceImport per namespace/name, the oldest export wins (KEP-1645). */

/** KEP-1645: conflicts resolve by ServiceExport creationTimestamp (oldest first), then by cluster name. */
export function oldestFirst(a: ExportedService, b: ExportedService): number {
  const ta = createdAt(a.export);
  const tb = createdAt(b.export);
  if (ta !== tb) return ta < tb ? -1 : 1;
  return compareStrings(a.cluster, b.cluster);
}

/** Milliseconds since the epoch; an export without a (parsable) creationTimestamp counts as the newest. */
function createdAt(exp: ServiceExport): number {
  const parsed = Date.parse(exp.metadata.creationTimestamp ?? '');
  return Number.isNaN(parsed) ? Number.POSITIVE_INFINITY : parsed;
}

export interface Merged {
  readonly serviceImport: ServiceImport;
  readonly conflicts: readonly ImportConflict[];
  readonly statuses: readonly ExportStatus[];
}

export function mergeExports(constituents: readonly ExportedService[]): Merged {
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
    // The fleet publishes each export's slices as MCS EndpointSlices (export-index.ts): consumers read those.
    status: { endpointSliceObjects: 'Present' },
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
