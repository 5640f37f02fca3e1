import { stringify } from 'yaml';
import { REGION_LABEL, SERVICE_NAME_LABEL } from '../snapshot/well-known-labels.ts';
import { GREETER_SERVICE } from './greeter/greeter-messages.ts';
import {
  DEMO_FLEET_NAMESPACE,
  DEMO_NAMESPACE,
  DEMO_NETWORK_SECRET,
  GATEWAY_IDENTITY,
  GRPC_SERVICE,
  GRPC_SERVICE_PORT,
  PAYMENTS_SERVICE,
  podEndpointSlice,
  type RunningPod,
} from './topology.ts';

/** The demo's objects as plain Kubernetes YAML: what a user would `kubectl apply` in a real clusterset. */
export function demoManifests(
  pods: readonly RunningPod[],
  controllerName: string,
  gatewayPort: number,
  clusterProfiles: readonly unknown[],
  networkIdentity: NetworkIdentityPem,
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
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: DEMO_FLEET_NAMESPACE } },
    ...clusterProfiles,
    networkIdentitySecret(networkIdentity),
    {
      apiVersion: 'policy.clusterset-gateway.io/v1alpha1',
      kind: 'ClusterSelectionPolicy',
      metadata: { name: 'payments-us-east', namespace: ns },
      spec: {
        targetRefs: [{ group: 'multicluster.x-k8s.io', kind: 'ServiceImport', name: PAYMENTS_SERVICE }],
        tiers: [
          { name: 'local', sameCluster: true },
          { name: 'region', sameProperty: REGION_LABEL },
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
    ...localEndpointSlices(pods),
  ];
  return objects.map((object) => stringify(object)).join('---\n');
}

export interface NetworkIdentityPem {
  readonly cert: string;
  readonly key: string;
  readonly ca: string;
}

/**
 * The gateway's network identity (`--network-tls-secret`), as cert-manager writes it: a kubernetes.io/tls Secret
 * whose ca.crt is the trust bundle. /config_dump shows where it comes from and when it ends, never its data.
 */
function networkIdentitySecret(pem: NetworkIdentityPem): unknown {
  const [namespace, name] = DEMO_NETWORK_SECRET.split('/');
  const base64 = (text: string) => Buffer.from(text).toString('base64');
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace },
    type: 'kubernetes.io/tls',
    data: { 'tls.crt': base64(pem.cert), 'tls.key': base64(pem.key), 'ca.crt': base64(pem.ca) },
  };
}

/**
 * The gateway's own cluster (east-1) also runs the plain Service `api`: its slice, as the EndpointSlice
 * controller writes it. Everything else reaches the gateway from the members, as derived ServiceImports.
 */
function localEndpointSlices(pods: readonly RunningPod[]): unknown[] {
  return pods
    .filter((pod) => pod.service === 'api' && pod.cluster === GATEWAY_IDENTITY.cluster)
    .map((pod) => podEndpointSlice(pod, { [SERVICE_NAME_LABEL]: 'api' }, { name: 'http', protocol: 'TCP' }));
}
