import type { FleetMembers, MemberState, MemberView, ServiceExport } from '../../src/fleet/member-view.ts';
import type { EndpointSlice, Service, ServicePort } from '../../src/snapshot/resources.ts';

/** Hand-made member views, as the membership layer (ClusterProfiles, kubeconfig files) publishes them. */

export function exportOf(namespace: string, name: string, createdAt: string): ServiceExport {
  return {
    apiVersion: 'multicluster.x-k8s.io/v1alpha1',
    kind: 'ServiceExport',
    metadata: { name, namespace, creationTimestamp: createdAt, generation: 1 },
  };
}

export function serviceOf(
  namespace: string,
  name: string,
  spec: {
    ports?: readonly ServicePort[];
    headless?: boolean;
    sessionAffinity?: string;
    trafficDistribution?: string;
    type?: 'ClusterIP' | 'ExternalName';
  } = {},
): Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace },
    spec: {
      ...(spec.type ? { type: spec.type } : {}),
      ports: spec.ports ?? [{ name: 'http', protocol: 'TCP', port: 80 }],
      ...(spec.headless ? { clusterIP: 'None' } : {}),
      ...(spec.sessionAffinity ? { sessionAffinity: spec.sessionAffinity } : {}),
      ...(spec.trafficDistribution ? { trafficDistribution: spec.trafficDistribution } : {}),
    },
  };
}

export interface SliceEndpointSpec {
  readonly ip: string;
  readonly port: number;
  readonly zone?: string;
  readonly node?: string;
  readonly ready?: boolean;
  readonly serving?: boolean;
  readonly terminating?: boolean;
}

export function sliceOf(
  namespace: string,
  service: string,
  name: string,
  endpoints: readonly SliceEndpointSpec[],
  portName = 'http',
): EndpointSlice {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name,
      namespace,
      labels: {
        'kubernetes.io/service-name': service,
        'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io',
      },
    },
    addressType: 'IPv4',
    ports: [{ name: portName, protocol: 'TCP', port: endpoints[0]?.port ?? 8080 }],
    endpoints: endpoints.map((e) => ({
      addresses: [e.ip],
      conditions: {
        ready: e.ready ?? true,
        serving: e.serving ?? e.ready ?? true,
        terminating: e.terminating ?? false,
      },
      ...(e.zone ? { zone: e.zone, hints: { forZones: [{ name: e.zone }] } } : {}),
      ...(e.node ? { nodeName: e.node } : {}),
    })),
  };
}

export function memberView(
  name: string,
  objects: {
    exports?: readonly ServiceExport[];
    services?: readonly Service[];
    slices?: readonly EndpointSlice[];
    state?: MemberState;
    reason?: string;
    properties?: Record<string, string>;
  } = {},
): MemberView {
  return {
    name,
    origin: { kind: 'Kubeconfig', file: `/etc/members/${name}.yaml` },
    server: `https://${name}.example.net:6443`,
    state: objects.state ?? 'synced',
    ...(objects.reason ? { reason: objects.reason } : {}),
    lastSyncTime: '2026-12-04T20:00:00Z',
    properties: objects.properties ?? {},
    serviceExports: objects.exports ?? [],
    services: objects.services ?? [],
    endpointSlices: objects.slices ?? [],
    clusterProperties: [],
  };
}

/** A FleetMembers whose views a test sets by hand; each `publish` is one coalesced change. */
export class InMemoryFleetMembers implements FleetMembers {
  #onChange: ((members: readonly MemberView[]) => void) | undefined;
  #views: readonly MemberView[];

  constructor(views: readonly MemberView[] = []) {
    this.#views = views;
  }

  async start(onChange: (members: readonly MemberView[]) => void): Promise<void> {
    this.#onChange = onChange;
    onChange(this.#views);
  }

  async stop(): Promise<void> {
    this.#onChange = undefined;
  }

  publish(views: readonly MemberView[]): void {
    this.#views = views;
    this.#onChange?.(views);
  }

  get views(): readonly MemberView[] {
    return this.#views;
  }
}
