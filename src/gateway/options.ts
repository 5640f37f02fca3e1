import type { LocalIdentity } from '../mcs/cluster-identity.ts';
import type { NetworkIdentityRefs } from './network-identity.ts';

export type { LocalIdentity };

export interface TranslateOptions {
  /** GatewayClasses whose `spec.controllerName` equals this belong to us. */
  readonly controllerName: string;
  readonly identity: LocalIdentity;
  /** Group/kind pairs accepted as ServiceImport backendRefs (GEP-1748); GKE uses `net.gke.io`. */
  readonly serviceImportKinds: readonly { readonly group: string; readonly kind: string }[];
  /** Addresses reported in Gateway status (`status.addresses`); the gateway's own IPs. */
  readonly gatewayAddresses: readonly string[];
  /** Build the east-west table (`*.svc.clusterset.local`). */
  readonly eastWest: boolean;
  /** Build the network gateway's table (`--network-gateway-port`, docs/multi-network.md). */
  readonly networkGateway?: boolean;
  /** Read the network gateway's certificate from these objects (`--network-tls-secret`), into the table. */
  readonly networkIdentity?: NetworkIdentityRefs;
  /**
   * Namespaces whose Services the east-west listener serves under their own names (`--mesh-namespaces`);
   * absent: every namespace. ServiceImports are served whatever this says.
   */
  readonly meshNamespaces?: readonly string[];
  /**
   * Give every Gateway its own loopback address (127.x.y.z, stable per `namespace/name`) instead of
   * `gatewayAddresses`: reported in its status and set as `PortConfig.address`, so two Gateways with a listener
   * on the same port keep separate routing tables, as they would behind separate load balancers. Only useful
   * when the proxy binds loopback on Linux (all of 127.0.0.0/8 is local there), e.g. under the conformance suite.
   */
  readonly loopbackAddressPerGateway?: boolean;
  /**
   * Whether an IP address is one of this host's (Gateway spec.addresses must be bindable to be programmed).
   * Absent: requested addresses are reported as given (served by a load balancer in front of us).
   */
  readonly isLocalAddress?: (address: string) => boolean;
}

export const DEFAULT_CONTROLLER_NAME = 'clusterset-gateway.io/gateway-controller';

export const DEFAULT_SERVICE_IMPORT_KINDS = [
  { group: 'multicluster.x-k8s.io', kind: 'ServiceImport' },
] as const;
