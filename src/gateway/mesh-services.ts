import type { Service } from '../snapshot/resources.ts';
import type { Snapshot } from '../snapshot/snapshot.ts';
import { namespaceOf } from './defaults.ts';
import type { TranslateOptions } from './options.ts';

/** On a Service or a Namespace: `disabled` leaves the Service (or every Service of the namespace) out of the mesh. */
export const MESH_LABEL = 'clusterset-gateway.io/mesh';
export const MESH_DISABLED = 'disabled';

/** The DNS suffix of a Service's name inside its own cluster. */
export const CLUSTER_LOCAL_DOMAIN = 'svc.cluster.local';

/** `<name>.<namespace>.svc.cluster.local`. */
export function clusterLocalHostname(namespace: string, name: string): string {
  return `${name}.${namespace}.${CLUSTER_LOCAL_DOMAIN}`;
}

/**
 * Whether the east-west listener serves a Service under its cluster-local name (and, when it has no
 * ServiceImport, its clusterset name): every Service of the watched namespaces, like a mesh that captures all
 * traffic, unless `--mesh-namespaces` leaves its namespace out or a `clusterset-gateway.io/mesh: disabled`
 * label on the Service or its Namespace opts it out. ExternalName Services have no endpoints to send to.
 */
export function isMeshService(snapshot: Snapshot, options: TranslateOptions, service: Service): boolean {
  if (service.spec?.type === 'ExternalName') return false;
  const namespace = namespaceOf(service);
  if (options.meshNamespaces !== undefined && !options.meshNamespaces.includes(namespace)) return false;
  if (service.metadata.labels?.[MESH_LABEL] === MESH_DISABLED) return false;
  return snapshot.get('Namespace', '', namespace)?.metadata.labels?.[MESH_LABEL] !== MESH_DISABLED;
}

/** The addresses a client may name the Service by instead of its name (MeshClusterIPMatching). */
export function clusterIPsOf(service: Service): string[] {
  const spec = service.spec;
  const ips = new Set<string>();
  for (const ip of [spec?.clusterIP, ...(spec?.clusterIPs ?? [])]) {
    if (ip === undefined || ip === '' || ip === 'None') continue;
    // IPv6 literals appear in an authority in brackets (RFC 3986 §3.2.2), which is how requests are matched.
    ips.add(ip.includes(':') ? `[${ip.toLowerCase()}]` : ip);
  }
  return [...ips];
}
