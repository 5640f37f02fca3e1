import { stringify } from 'yaml';
import { GREETER_SERVICE } from '../greeter/greeter-messages.ts';
import {
  DEMO_NAMESPACE,
  type DemoPod,
  GATEWAY_IDENTITY,
  GRPC_SERVICE,
  GRPC_SERVICE_PORT,
  PAYMENTS_SERVICE,
} from './topology.ts';

export interface RunningPod extends DemoPod {
  readonly port: number;
}

/** The demo's objects as plain Kubernetes YAML: what a user would `kubectl apply` in a real clusterset. */
export function demoManifests(
  pods: readonly RunningPod[],
  controllerName: string,
  gatewayPort: number,
): string {
  const ns = DEMO_NAMESPACE;
  const objects: unknown[] = [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } },
    {
      apiVersion: 'about.k8s.io/v1alpha1',
      kind: 'ClusterProperty',
      metadata: { name: 'cluster.clusterset.k8s.io' },
      spec: { value: GATEWAY_IDENTITY.cluster },
    },
    {
      apiVersion: 'about.k8s.io/v1alpha1',
      kind: 'ClusterProperty',
      metadata: { name: 'clusterset.k8s.io' },
      spec: { value: GATEWAY_IDENTITY.clusterset },
    },
    {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'GatewayClass',
      metadata: { name: 'clusterset-gateway' },
      spec: { controllerName },
    },
    {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'Gateway',
      metadata: { name: 'demo', namespace: ns },
      spec: {
        gatewayClassName: 'clusterset-gateway',
        listeners: [{ name: 'http', protocol: 'HTTP', port: gatewayPort }],
      },
    },
    serviceImport('web', 'PreferSameZone', HTTP_PORT),
    serviceImport('api', undefined, HTTP_PORT),
    serviceImport(GRPC_SERVICE, 'PreferSameZone', GRPC_PORT),
    serviceImport(PAYMENTS_SERVICE, undefined, HTTP_PORT),
    {
      apiVersion: 'policy.clusterset-gateway.io/v1alpha1',
      kind: 'ClusterSelectionPolicy',
      metadata: { name: 'payments-us-east', namespace: ns },
      spec: {
        targetRefs: [{ group: 'multicluster.x-k8s.io', kind: 'ServiceImport', name: PAYMENTS_SERVICE }],
        tiers: [
          { name: 'local', sameCluster: true },
          { name: 'region', sameProperty: 'topology.kubernetes.io/region' },
        ],
        fallback: 'None',
      },
    },
    {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'HTTPRoute',
      metadata: { name: PAYMENTS_SERVICE, namespace: ns },
      spec: {
        parentRefs: [{ name: 'demo' }],
        rules: [
          {
            matches: [{ path: { type: 'PathPrefix', value: `/${PAYMENTS_SERVICE}` } }],
            backendRefs: [
              { group: 'multicluster.x-k8s.io', kind: 'ServiceImport', name: PAYMENTS_SERVICE, port: 80 },
            ],
          },
        ],
      },
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'api', namespace: ns },
      spec: { selector: { app: 'api' }, ports: [{ name: 'http', port: 80, targetPort: 8080 }] },
    },
    {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'HTTPRoute',
      metadata: { name: 'web', namespace: ns },
      spec: {
        parentRefs: [{ name: 'demo' }],
        rules: [
          { backendRefs: [{ group: 'multicluster.x-k8s.io', kind: 'ServiceImport', name: 'web', port: 80 }] },
        ],
      },
    },
    {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'HTTPRoute',
      metadata: { name: 'api', namespace: ns },
      spec: {
        parentRefs: [{ name: 'demo' }],
        rules: [
          {
            matches: [{ path: { type: 'PathPrefix', value: '/api' } }],
            backendRefs: [
              { name: 'api', port: 80, weight: 90 },
              { group: 'multicluster.x-k8s.io', kind: 'ServiceImport', name: 'api', port: 80, weight: 10 },
            ],
          },
        ],
      },
    },
    {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'GRPCRoute',
      metadata: { name: GRPC_SERVICE, namespace: ns },
      spec: {
        parentRefs: [{ name: 'demo' }],
        rules: [
          {
            matches: [{ method: { service: GREETER_SERVICE } }],
            backendRefs: [
              {
                group: 'multicluster.x-k8s.io',
                kind: 'ServiceImport',
                name: GRPC_SERVICE,
                port: GRPC_SERVICE_PORT,
              },
            ],
          },
        ],
      },
    },
    ...endpointSlices(pods),
  ];
  return objects.map((object) => stringify(object)).join('---\n');
}

interface ServicePort {
  readonly name: string;
  readonly protocol: 'TCP';
  readonly port: number;
  readonly appProtocol?: string;
}

const HTTP_PORT: ServicePort = { name: 'http', protocol: 'TCP', port: 80 };
// GEP-1911: h2c says how to speak to the pods; a GRPCRoute backend would get h2c anyway.
const GRPC_PORT: ServicePort = {
  name: 'grpc',
  protocol: 'TCP',
  port: GRPC_SERVICE_PORT,
  appProtocol: 'kubernetes.io/h2c',
};

function serviceImport(name: string, trafficDistribution: string | undefined, port: ServicePort): unknown {
  return {
    apiVersion: 'multicluster.x-k8s.io/v1alpha1',
    kind: 'ServiceImport',
    metadata: { name, namespace: DEMO_NAMESPACE },
    spec: {
      type: 'ClusterSetIP',
      ports: [port],
      ...(trafficDistribution ? { trafficDistribution } : {}),
    },
  };
}

/**
 * One slice per pod, as the MCS controller would import them: labelled with the ServiceImport's name and
 * the source cluster. The local `api` pod also gets a plain slice for the local Service.
 */
function endpointSlices(pods: readonly RunningPod[]): unknown[] {
  return pods.flatMap((pod) => {
    const endpoint = {
      addresses: ['127.0.0.1'],
      conditions: { ready: true },
      zone: pod.zone,
      nodeName: pod.node,
      targetRef: { kind: 'Pod', name: pod.pod, namespace: DEMO_NAMESPACE },
    };
    const imported = {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: {
        name: `imported-${pod.pod}`,
        namespace: DEMO_NAMESPACE,
        labels: {
          'multicluster.kubernetes.io/service-name': pod.service,
          'multicluster.kubernetes.io/source-cluster': pod.cluster,
          'topology.kubernetes.io/region': pod.region,
        },
      },
      addressType: 'IPv4',
      endpoints: [endpoint],
      ports: [{ ...(pod.protocol === 'grpc' ? GRPC_PORT : HTTP_PORT), port: pod.port }],
    };
    if (pod.service !== 'api' || pod.cluster !== GATEWAY_IDENTITY.cluster) return [imported];
    const local = {
      ...imported,
      metadata: {
        name: pod.pod,
        namespace: DEMO_NAMESPACE,
        labels: { 'kubernetes.io/service-name': pod.service },
      },
    };
    return [imported, local];
  });
}
