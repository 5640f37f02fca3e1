/**
 * The built-in demo: one gateway in cluster `east-1` (region us-east, zone us-east-1a) and pods that stand in
 * for services in three clusters of one clusterset: HTTP echo pods, and gRPC pods of `demo.Greeter`.
 */
export interface DemoPod {
  readonly service: string;
  /** `http`: an echo server (src/demo/echo); `grpc`: a Greeter server speaking h2c (src/demo/greeter). */
  readonly protocol: 'http' | 'grpc';
  readonly pod: string;
  readonly cluster: string;
  readonly region: string;
  readonly zone: string;
  readonly node: string;
}

/** A demo pod once its server listens. */
export interface RunningPod extends DemoPod {
  readonly port: number;
}

export const DEMO_NAMESPACE = 'demo';
/** Where the demo's hub keeps its ClusterProfiles. */
export const DEMO_FLEET_NAMESPACE = 'fleet-system';

export const GATEWAY_IDENTITY = {
  cluster: 'east-1',
  clusterset: 'demo-clusterset',
  region: 'us-east',
  zone: 'us-east-1a',
  node: 'east-1-node-a',
} as const;

/**
 * The cluster on a network of its own (docs/multi-network.md): its pods are reached only through its network
 * gateway (another clusterset-gateway process of the demo's world), over mutual TLS. The others share the
 * network `default`.
 */
export const OTHER_NETWORK = {
  cluster: 'west-1',
  network: 'net-west',
  region: 'us-west',
  zone: 'us-west-1a',
} as const;
/** The Secret (in the hub's manifests) holding the gateway's own network identity: `--network-tls-secret`. */
export const DEMO_NETWORK_SECRET = 'fleet-system/east-1-network-identity';

/** The gRPC service's name, and the port its ServiceImport and GRPCRoute use. */
export const GRPC_SERVICE = 'greeter';
export const GRPC_SERVICE_PORT = 50051;
/** KEP-4444 `trafficDistribution` of the exported Services (the derived ServiceImports take it from them). */
export const TRAFFIC_DISTRIBUTION: Readonly<Record<string, string>> = {
  web: 'PreferSameZone',
  [GRPC_SERVICE]: 'PreferSameZone',
};
/** The service whose traffic a ClusterSelectionPolicy keeps inside the gateway's region. */
export const PAYMENTS_SERVICE = 'payments';

const pod = (service: string, cluster: string, region: string, zone: string, n: number): DemoPod => ({
  service,
  protocol: service === GRPC_SERVICE ? 'grpc' : 'http',
  pod: `${service}-${zone}-${n}`,
  cluster,
  region,
  zone,
  node: `${cluster}-node-${zone.slice(-1)}`,
});

export const DEMO_PODS: readonly DemoPod[] = [
  // `web`: a ServiceImport with PreferSameZone; one tier per step of distance from the gateway.
  pod('web', 'east-1', 'us-east', 'us-east-1a', 1),
  pod('web', 'east-1', 'us-east', 'us-east-1a', 2),
  // A third near pod, so stopping one shows the 1.4 rule: 2/3 × 1.4 = 93.3% stays near (issue 10).
  pod('web', 'east-1', 'us-east', 'us-east-1a', 3),
  pod('web', 'east-1', 'us-east', 'us-east-1b', 1),
  pod('web', 'east-2', 'us-east', 'us-east-1c', 1),
  pod('web', 'west-1', 'us-west', 'us-west-1a', 1),
  // `api`: a local Service (90%) next to a ServiceImport with the MCS default spread (10%).
  pod('api', 'east-1', 'us-east', 'us-east-1b', 1),
  pod('api', 'east-2', 'us-east', 'us-east-1c', 1),
  pod('api', 'west-1', 'us-west', 'us-west-1a', 1),
  // `greeter`: gRPC (GRPCRoute, h2c) in the tiers of `web`, PreferSameZone too.
  pod(GRPC_SERVICE, 'east-1', 'us-east', 'us-east-1a', 1),
  pod(GRPC_SERVICE, 'east-1', 'us-east', 'us-east-1a', 2),
  pod(GRPC_SERVICE, 'east-1', 'us-east', 'us-east-1b', 1),
  pod(GRPC_SERVICE, 'east-2', 'us-east', 'us-east-1c', 1),
  pod(GRPC_SERVICE, 'west-1', 'us-west', 'us-west-1a', 1),
  // `payments`: a ServiceImport under a ClusterSelectionPolicy that keeps it in region us-east (west-1 never).
  pod(PAYMENTS_SERVICE, 'east-1', 'us-east', 'us-east-1a', 1),
  pod(PAYMENTS_SERVICE, 'east-2', 'us-east', 'us-east-1c', 1),
  pod(PAYMENTS_SERVICE, 'west-1', 'us-west', 'us-west-1a', 1),
];

/** A running pod's EndpointSlice (one ready endpoint on loopback), as the EndpointSlice controller writes it. */
export function podEndpointSlice(
  pod: RunningPod,
  labels: Readonly<Record<string, string>>,
  port: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: pod.pod, namespace: DEMO_NAMESPACE, labels },
    addressType: 'IPv4',
    endpoints: [
      {
        addresses: ['127.0.0.1'],
        conditions: { ready: true },
        zone: pod.zone,
        nodeName: pod.node,
        targetRef: { kind: 'Pod', name: pod.pod, namespace: DEMO_NAMESPACE },
      },
    ],
    ports: [{ ...port, port: pod.port }],
  };
}
