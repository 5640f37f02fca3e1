import { stringify } from 'yaml';

/** Small builders for the YAML a user writes; tests read like the manifests they stand for. */
export const CONTROLLER = 'clusterset-gateway.io/gateway-controller';

export function yamlDocs(...objects: readonly unknown[]): string {
  return objects.map((object) => stringify(object)).join('---\n');
}

export function gatewayClass(name = 'csgw'): unknown {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'GatewayClass',
    metadata: { name },
    spec: { controllerName: CONTROLLER },
  };
}

export function gateway(
  name: string,
  namespace: string,
  listeners: readonly unknown[],
  className = 'csgw',
): unknown {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'Gateway',
    metadata: { name, namespace },
    spec: { gatewayClassName: className, listeners },
  };
}

export function service(
  name: string,
  namespace: string,
  port = 80,
  extra: Record<string, unknown> = {},
): unknown {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace },
    spec: { selector: { app: name }, ports: [{ name: 'http', port, targetPort: 8080 }], ...extra },
  };
}

export interface SliceEndpoint {
  readonly port: number;
  readonly zone?: string;
  readonly node?: string;
  readonly pod?: string;
  readonly ready?: boolean;
}

/** An EndpointSlice for a local Service (`kubernetes.io/service-name`). */
export function serviceSlice(
  name: string,
  service: string,
  namespace: string,
  endpoint: SliceEndpoint,
): unknown {
  return slice(name, namespace, { 'kubernetes.io/service-name': service }, endpoint);
}

/** An EndpointSlice imported from a cluster (MCS API labels). */
export function importedSlice(
  name: string,
  serviceImport: string,
  namespace: string,
  cluster: string,
  endpoint: SliceEndpoint,
): unknown {
  return slice(
    name,
    namespace,
    {
      'multicluster.kubernetes.io/service-name': serviceImport,
      'multicluster.kubernetes.io/source-cluster': cluster,
    },
    endpoint,
  );
}

function slice(
  name: string,
  namespace: string,
  labels: Record<string, string>,
  endpoint: SliceEndpoint,
): unknown {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name, namespace, labels },
    addressType: 'IPv4',
    endpoints: [
      {
        addresses: ['127.0.0.1'],
        conditions: { ready: endpoint.ready ?? true },
        ...(endpoint.zone ? { zone: endpoint.zone } : {}),
        ...(endpoint.node ? { nodeName: endpoint.node } : {}),
        ...(endpoint.pod ? { targetRef: { kind: 'Pod', name: endpoint.pod, namespace } } : {}),
      },
    ],
    ports: [{ name: 'http', protocol: 'TCP', port: endpoint.port }],
  };
}

export function httpRoute(name: string, namespace: string, spec: Record<string, unknown>): unknown {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: { name, namespace },
    spec,
  };
}

export function serviceImport(
  name: string,
  namespace: string,
  trafficDistribution?: string,
  port = 80,
): unknown {
  return {
    apiVersion: 'multicluster.x-k8s.io/v1alpha1',
    kind: 'ServiceImport',
    metadata: { name, namespace },
    spec: {
      type: 'ClusterSetIP',
      ports: [{ name: 'http', protocol: 'TCP', port }],
      ...(trafficDistribution ? { trafficDistribution } : {}),
    },
  };
}
