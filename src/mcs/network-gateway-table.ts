import type { BackendCluster, NetworkGatewayConfig, UpstreamEndpoint } from '../ir/route-table.ts';
import { compareStrings } from '../snapshot/object-order.ts';
import type { Snapshot } from '../snapshot/snapshot.ts';
import { resolveServiceImportBackend } from './backends.ts';
import type { LocalIdentity } from './cluster-identity.ts';
import { indexNetworks, tunnelAuthority } from './networks.ts';
import { serviceImportSpec } from './service-import-spec.ts';
import { buildTiers } from './traffic-distribution.ts';
import type { McsWarning } from './warnings.ts';

export interface NetworkGatewayTable {
  readonly config: NetworkGatewayConfig;
  /** One per served authority, with only this cluster's own endpoints. */
  readonly backends: readonly BackendCluster[];
  readonly warnings: readonly McsWarning[];
}

/** The backend id a network gateway sends an authority to: the import's, marked as this cluster's share. */
export function localShareId(namespace: string, name: string, port: number): string {
  return `ServiceImport/${namespace}/${name}:${port}#local`;
}

/**
 * What this cluster's network gateway serves: every port of every ServiceImport that this cluster exports (it
 * has endpoints in the import), as `<svc>.<ns>.svc.clusterset.local:<port>`, sent only to this cluster's own
 * endpoints ordered by the import's trafficDistribution. Never a tunnel to another network: a peer on another
 * network is asking this cluster for its pods, and forwarding further would make the gateway an open relay.
 */
export function translateNetworkGateway(snapshot: Snapshot, identity: LocalIdentity): NetworkGatewayTable {
  const networks = indexNetworks(snapshot, identity);
  const warnings: McsWarning[] = [...networks.problems];
  const services: { authority: string; backendId: string }[] = [];
  const backends: BackendCluster[] = [];
  for (const serviceImport of snapshot.list('ServiceImport')) {
    const { namespace = '', name } = serviceImport.metadata;
    for (const { port } of serviceImportSpec(serviceImport).ports ?? []) {
      const resolved = resolveServiceImportBackend(snapshot, namespace, name, port, identity);
      if (!resolved.ok) continue;
      const own: UpstreamEndpoint[] = [];
      for (const tier of resolved.backend.tiers)
        for (const endpoint of tier)
          if (endpoint.cluster === networks.local && endpoint.tunnel === undefined) own.push(endpoint);
      if (own.length === 0) continue;
      const id = localShareId(namespace, name, port);
      const tiers = buildTiers(own, resolved.backend.trafficDistribution, identity, id);
      const { clusterSelection: _policy, tierOverprovisioning: _factors, ...rest } = resolved.backend;
      backends.push({ ...rest, id, tiers: tiers.tiers, tierNames: tiers.tierNames });
      services.push({ authority: tunnelAuthority(namespace, name, port), backendId: id });
    }
  }
  services.sort((a, b) => compareStrings(a.authority, b.authority));
  return { config: { network: networks.localNetwork, services }, backends, warnings };
}
