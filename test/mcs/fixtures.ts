import { parseAllDocuments } from 'yaml';
import type { AnyResource, Endpoint, EndpointSlice, Service } from '../../src/snapshot/resources.ts';
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
