import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { gatewayClass, yamlDocs } from '../support/manifests.ts';
import { identityFiles, makeTrustDomain, networkTlsArgs } from '../support/network-certs.ts';

/**
 * Two gateways on loopback as two networks (docs/multi-network.md): `east` (net-east) is the source; `west`
 * (net-west) serves its own pods through its network gateway port. East knows west's pods only by an address it
 * never dials (TEST-NET-1), so whatever reaches them went through west's network gateway, over mutual TLS with
 * certificates made here by scripts/network-certs.sh (the documented openssl lines).
 */
export const UNROUTABLE = '192.0.2.10';

export interface ServicePort {
  readonly name: string;
  readonly port: number;
  readonly appProtocol?: string;
}

export function serviceImportOf(name: string, namespace: string, ports: readonly ServicePort[]): unknown {
  return {
    apiVersion: 'multicluster.x-k8s.io/v1alpha1',
    kind: 'ServiceImport',
    metadata: { name, namespace },
    spec: {
      type: 'ClusterSetIP',
      ports: ports.map((p) => ({
        name: p.name,
        protocol: 'TCP',
        port: p.port,
        ...(p.appProtocol ? { appProtocol: p.appProtocol } : {}),
      })),
    },
  };
}

/**
 * `cluster`'s slice of `service`: its pod on 127.0.0.1:`targetPort` (the service port `portName`), or, seen
 * from the other network, at the unroutable address.
 */
export function sliceOf(
  service: string,
  namespace: string,
  cluster: string,
  portName: string,
  targetPort: number,
  reachable: boolean,
): unknown {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name: `${service}-${cluster}`,
      namespace,
      labels: {
        'multicluster.kubernetes.io/service-name': service,
        'multicluster.kubernetes.io/source-cluster': cluster,
      },
    },
    addressType: 'IPv4',
    endpoints: [
      {
        addresses: [reachable ? '127.0.0.1' : UNROUTABLE],
        conditions: { ready: true },
        zone: `${cluster}-a`,
        targetRef: { kind: 'Pod', name: `${service}-${cluster}`, namespace },
      },
    ],
    ports: [{ name: portName, protocol: 'TCP', port: targetPort }],
  };
}

/** The flags that make a gateway cluster `cluster` on `network`, with its identity from the trust domain in `dir`. */
export function onNetwork(dir: string, cluster: string, network: string): string[] {
  return ['--cluster', cluster, '--network', network, ...networkTlsArgs(identityFiles(dir, cluster))];
}

export function profileOf(cluster: string, network: string, gatewayPort: number): unknown {
  return {
    apiVersion: 'multicluster.x-k8s.io/v1alpha1',
    kind: 'ClusterProfile',
    metadata: { name: cluster, namespace: 'fleet' },
    spec: { displayName: cluster, clusterManager: { name: 'test' } },
    status: {
      properties: [
        { name: 'network.clusterset-gateway.io', value: network },
        { name: 'network-gateways.clusterset-gateway.io', value: `127.0.0.1:${gatewayPort}` },
      ],
    },
  };
}

/** A ClusterSelectionPolicy on `service`: this cluster first, then west, nothing else. */
export function homeThenWest(service: string, namespace: string): unknown {
  return {
    apiVersion: 'policy.clusterset-gateway.io/v1alpha1',
    kind: 'ClusterSelectionPolicy',
    metadata: { name: `${service}-home-first`, namespace },
    spec: {
      targetRefs: [{ group: 'multicluster.x-k8s.io', kind: 'ServiceImport', name: service }],
      tiers: [
        { name: 'home', sameCluster: true },
        { name: 'far', clusters: ['west'] },
      ],
      fallback: 'None',
    },
  };
}

export interface NetworkPair {
  readonly east: GatewayProcess;
  readonly west: GatewayProcess;
  /** East's east-west listener. */
  readonly eastWestPort: number;
  readonly westNetworkPort: number;
  stop(): Promise<void>;
}

/**
 * Starts west (its manifests plus the GatewayClass) with its network gateway, then east (its manifests plus
 * the GatewayClass and west's ClusterProfile) with an east-west listener. Each side's manifests come from a
 * function of west's network gateway port.
 */
export async function startNetworkPair(options: {
  /** East's manifests, or a function of west's network gateway port giving them. */
  readonly east: readonly unknown[] | ((westNetworkPort: number) => readonly unknown[]);
  readonly west: readonly unknown[];
  readonly eastArgs?: readonly string[];
}): Promise<NetworkPair> {
  const dir = mkdtempSync(join(tmpdir(), 'csgw-net-'));
  makeTrustDomain(dir, 'demo.local', ['east', 'west']);
  const westNetworkPort = await freePort();
  const eastWestPort = await freePort();
  const common = ['--health-check-interval-ms', '500', '--avoidance-ms', '200'];
  const [east, west] = await Promise.all([
    startGateway({
      args: [
        ...onNetwork(dir, 'east', 'net-east'),
        '--east-west-port',
        String(eastWestPort),
        ...common,
        ...(options.eastArgs ?? []),
      ],
      manifests: {
        'east.yaml': yamlDocs(
          gatewayClass(),
          profileOf('west', 'net-west', westNetworkPort),
          ...(typeof options.east === 'function' ? options.east(westNetworkPort) : options.east),
        ),
      },
      startTimeoutMs: 40_000,
    }),
    startGateway({
      args: [
        ...onNetwork(dir, 'west', 'net-west'),
        '--network-gateway-port',
        String(westNetworkPort),
        ...common,
      ],
      manifests: { 'west.yaml': yamlDocs(gatewayClass(), ...options.west) },
      startTimeoutMs: 40_000,
    }),
  ]);
  return {
    east,
    west,
    eastWestPort,
    westNetworkPort,
    async stop() {
      await Promise.all([east.stop(), west.stop()]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
