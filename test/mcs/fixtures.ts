import { parseAllDocuments } from 'yaml';
import type {
  AnyResource,
  Endpoint,
  EndpointSlice,
  Service,
  ServiceImport,
} from '../../src/snapshot/resources.ts';
import { Snapshot } from '../../src/snapshot/snapshot.ts';

/** A Snapshot from multi-document Kubernetes YAML, as a user would write it. */
export function snapshotFromYaml(text: string): Snapshot {
  const objects = parseAllDocuments(text)
    .map((doc) => doc.toJS() as AnyResource | null)
    .filter((o): o is AnyResource => o !== null);
  return new Snapshot(objects);
}

export function service(
  namespace: string,
  name: string,
  spec: NonNullable<Service['spec']>,
  annotations?: Record<string, string>,
): Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace, ...(annotations ? { annotations } : {}) },
    spec,
  };
}

export function slice(
  namespace: string,
  name: string,
  labels: Record<string, string>,
  endpoints: readonly Endpoint[],
  ports: EndpointSlice['ports'] = [{ name: 'http', port: 8080 }],
): EndpointSlice {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name, namespace, labels },
    addressType: 'IPv4',
    endpoints,
    ports,
  };
}

/** A ready endpoint with optional zone and node. */
export function ep(address: string, extra: Partial<Endpoint> = {}): Endpoint {
  return { addresses: [address], ...extra };
}

export function serviceImport(
  namespace: string,
  name: string,
  spec: NonNullable<ServiceImport['spec']>,
  annotations?: Record<string, string>,
): ServiceImport {
  return {
    apiVersion: 'multicluster.x-k8s.io/v1beta1',
    kind: 'ServiceImport',
    metadata: { name, namespace, ...(annotations ? { annotations } : {}) },
    spec,
  };
}

/** An MCS EndpointSlice for an import; `cluster` undefined leaves out the source-cluster label. */
export function mcsSlice(
  namespace: string,
  name: string,
  importName: string,
  cluster: string | undefined,
  endpoints: readonly Endpoint[],
  extraLabels: Record<string, string> = {},
  ports: EndpointSlice['ports'] = [{ name: 'http', port: 8080 }],
): EndpointSlice {
  return slice(
    namespace,
    name,
    {
      'multicluster.kubernetes.io/service-name': importName,
      ...(cluster ? { 'multicluster.kubernetes.io/source-cluster': cluster } : {}),
      ...extraLabels,
    },
    endpoints,
    ports,
  );
}
