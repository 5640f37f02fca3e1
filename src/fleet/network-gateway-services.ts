import { NETWORK_GATEWAYS_PROPERTY, NETWORK_PROPERTY } from '../mcs/networks.ts';
import { isRecord } from '../snapshot/json-object.ts';
import { compareStrings } from '../snapshot/object-order.ts';
import type { Service } from '../snapshot/resources.ts';

/**
 * A member's network gateways, found as Istio finds its east-west gateways: a Service of the member labelled
 * with the network it serves (`network.clusterset-gateway.io: <network>`, the same name as the cluster
 * property) whose `status.loadBalancer.ingress` (ip, else hostname) and `spec.externalIPs` are the addresses.
 * The port is the Service port named `network-gateway`, else 15008, else its first port. The result becomes the
 * member's properties (network and gateway list, docs/multi-network.md); properties the member or its
 * ClusterProfile states win over them.
 */
const PORT_NAME = 'network-gateway';
const DEFAULT_PORT = 15008;

/** Annotation of a member's derived ClusterProfile: the Services its network gateways were found on. */
export const NETWORK_GATEWAYS_FROM_ANNOTATION = 'clusterset-gateway.io/network-gateways-source';

export function networkGatewayProperties(services: readonly Service[]): Readonly<Record<string, string>> {
  const { network, gateways } = discover(services);
  if (network === undefined) return {};
  return {
    [NETWORK_PROPERTY]: network,
    ...(gateways.length > 0 ? { [NETWORK_GATEWAYS_PROPERTY]: gateways.join(',') } : {}),
  };
}

/** The Services (`namespace/name`) that gave a member's network gateway addresses, for operators to see. */
export function networkGatewayServices(services: readonly Service[]): readonly string[] {
  return discover(services).found;
}

function discover(services: readonly Service[]): { network?: string; gateways: string[]; found: string[] } {
  let network: string | undefined;
  const gateways: string[] = [];
  const found: string[] = [];
  const ordered = [...services].sort((a, b) => compareStrings(keyOf(a), keyOf(b)));
  for (const service of ordered) {
    const label = service.metadata.labels?.[NETWORK_PROPERTY]?.trim();
    if (!label) continue;
    network ??= label;
    if (label !== network) continue;
    const port = gatewayPort(service);
    if (port === undefined) continue;
    const before = gateways.length;
    for (const address of serviceAddresses(service)) {
      const entry = address.includes(':') ? `[${address}]:${port}` : `${address}:${port}`;
      if (!gateways.includes(entry)) gateways.push(entry);
    }
    if (gateways.length > before) found.push(keyOf(service));
  }
  return { ...(network !== undefined ? { network } : {}), gateways, found };
}

function gatewayPort(service: Service): number | undefined {
  const ports = service.spec?.ports ?? [];
  return (
    ports.find((p) => p.name === PORT_NAME)?.port ??
    ports.find((p) => p.port === DEFAULT_PORT)?.port ??
    ports[0]?.port
  );
}

/** `status.loadBalancer.ingress[].ip` (else `.hostname`), then `spec.externalIPs`; anything malformed is skipped. */
function serviceAddresses(service: Service): string[] {
  const out: string[] = [];
  const status = (service as { readonly status?: unknown }).status;
  const ingress =
    isRecord(status) && isRecord(status['loadBalancer']) ? status['loadBalancer']['ingress'] : [];
  if (Array.isArray(ingress)) {
    for (const entry of ingress) {
      if (!isRecord(entry)) continue;
      const address = entry['ip'] ?? entry['hostname'];
      if (typeof address === 'string' && /^[A-Za-z0-9.:-]+$/.test(address)) out.push(address);
    }
  }
  const external = (service.spec as { readonly externalIPs?: unknown } | undefined)?.externalIPs;
  if (Array.isArray(external))
    for (const ip of external) if (typeof ip === 'string' && /^[0-9a-fA-F.:]+$/.test(ip)) out.push(ip);
  return out;
}

function keyOf(service: Service): string {
  return `${service.metadata.namespace ?? ''}/${service.metadata.name}`;
}
