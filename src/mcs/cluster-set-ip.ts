import { isIP } from 'node:net';
import type { EndpointSlice, ServiceImport, ServiceImportPort } from '../snapshot/resources.ts';
import type { SliceSource } from './endpoints.ts';
import type { McsWarning } from './warnings.ts';

/**
 * KEP-1645's `status.endpointSliceObjects: Absent`: the MCS implementation publishes no EndpointSlices for the
 * import (Cilium syncs them only when asked), so the clusterset is reached through the import's ClusterSetIP
 * (`spec.ips`), one endpoint that the implementation's own data plane spreads over the clusters.
 */
export function slicesAbsent(serviceImport: ServiceImport): boolean {
  return serviceImport.status?.endpointSliceObjects === 'Absent';
}

/**
 * The ClusterSetIP as the one source of an `Absent` import's port: a slice made here (never in any snapshot)
 * with the import's first valid IP on the import's own port, attributed to this cluster, whose data plane
 * answers for that address. No IP: no source, and a line saying why its requests are answered 503.
 */
export function clusterSetIpSource(
  serviceImport: ServiceImport,
  ips: readonly string[] | undefined,
  importPort: ServiceImportPort,
  cluster: string,
  region: string | undefined,
  warnings: McsWarning[],
): SliceSource[] {
  const { name, namespace = 'default' } = serviceImport.metadata;
  const what = `ServiceImport ${namespace}/${name}: status.endpointSliceObjects is Absent`;
  const ip = (ips ?? []).find((address) => isIP(address) !== 0);
  if (ip === undefined) {
    const given =
      (ips ?? []).length > 0
        ? `spec.ips (${(ips ?? []).join(', ')}) holds no IP address`
        : 'spec.ips is empty';
    warnings.push({
      code: 'ClusterSetIPMissing',
      message: `${what} and ${given}: port ${importPort.port} has no endpoints; its requests are answered 503 until the import has a ClusterSetIP or its MCS implementation publishes EndpointSlices`,
    });
    return [];
  }
  warnings.push({
    code: 'ServedThroughClusterSetIP',
    message: `${what}: port ${importPort.port} is served through its ClusterSetIP ${ip} as one endpoint; the MCS implementation balances across clusters behind it, so per-cluster locality and cluster selection do not apply`,
  });
  const slice: EndpointSlice = {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: `${name}-clustersetip`, namespace },
    addressType: isIP(ip) === 6 ? 'IPv6' : 'IPv4',
    ports: [{ port: importPort.port, ...(importPort.name !== undefined ? { name: importPort.name } : {}) }],
    endpoints: [{ addresses: [ip] }],
  };
  return [{ slice, cluster, ...(region ? { region } : {}) }];
}
