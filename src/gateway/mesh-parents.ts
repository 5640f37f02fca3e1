import { serviceImportSpec } from '../mcs/service-import-spec.ts';
import type { GRPCRoute, HTTPRoute, ParentReference } from '../snapshot/resources.ts';
import type { Snapshot } from '../snapshot/snapshot.ts';
import type { Problem } from './conditions.ts';
import { namespaceOf } from './defaults.ts';
import type { TranslateOptions } from './options.ts';
import { type NormalizedParentRef, normalizeParentRef } from './route-attachment.ts';

/** A parentRef naming a Service or ServiceImport: the route configures that service's east-west traffic. */
export interface MeshParent {
  readonly ref: ParentReference;
  readonly index: number;
  readonly normalized: NormalizedParentRef;
  readonly kind: 'Service' | 'ServiceImport';
}

export interface ParentPorts {
  readonly kind: 'Service' | 'ServiceImport';
  /** The ports the route applies to (ParentReference.port, else every port of the parent). */
  readonly ports: readonly number[];
}

export type MeshParentReason = 'NoMatchingParent' | 'UnsupportedValue';

/**
 * The parentRefs of a route that are mesh parents (GEP-1426): core Services (`group: ""` must be written
 * out; an absent group means gateway.networking.k8s.io) and the ServiceImport kinds (GEP-1748).
 */
export function meshParentsOf(route: HTTPRoute | GRPCRoute, options: TranslateOptions): MeshParent[] {
  const routeNamespace = namespaceOf(route);
  const out: MeshParent[] = [];
  for (const [index, ref] of (route.spec?.parentRefs ?? []).entries()) {
    const normalized = normalizeParentRef(ref, routeNamespace);
    if (normalized.group === '' && normalized.kind === 'Service') {
      out.push({ ref, index, normalized, kind: 'Service' });
    } else if (
      options.serviceImportKinds.some((k) => k.group === normalized.group && k.kind === normalized.kind)
    ) {
      out.push({ ref, index, normalized, kind: 'ServiceImport' });
    }
  }
  return out;
}

/**
 * Checks a mesh parent and finds the ports the route applies to:
 * - a parent in another namespace makes a "consumer" route, which applies only to clients in the route's
 *   namespace (ParentReference.namespace, GEP-1426). A sidecarless proxy cannot tell a client's namespace,
 *   so consumer routes are refused (UnsupportedValue) rather than applied to every client;
 * - the parent must exist and, for a Service, be one the mesh serves (`meshServices`, by `namespace/name`:
 *   `--mesh-namespaces` and the `clusterset-gateway.io/mesh: disabled` label leave Services out)
 *   (NoMatchingParent); headless and ExternalName Services have no frontend to route
 *   (GEP-1426 "Allowed service types": SHOULD NOT be supported), nor do Headless ServiceImports (GEP-1748);
 * - `port` must be one of the parent's ports, `sectionName` one of its port names (NoMatchingParent).
 */
export function resolveMeshParent(
  snapshot: Snapshot,
  routeNamespace: string,
  parent: MeshParent,
  meshServices: ReadonlySet<string>,
): ParentPorts | { readonly problem: Problem<MeshParentReason> } {
  const { normalized, index, kind } = parent;
  const field = `spec.parentRefs[${index}]`;
  const what = `${kind} ${normalized.namespace}/${normalized.name}`;
  if (normalized.namespace !== routeNamespace) {
    return fail(
      'UnsupportedValue',
      `${field}: ${what} is in another namespace; consumer routes are not supported by the east-west proxy (it cannot tell which namespace a client is in)`,
    );
  }
  let ports: readonly { readonly port: number; readonly name?: string }[];
  if (kind === 'Service') {
    const service = snapshot.get('Service', normalized.namespace, normalized.name);
    if (!service) return fail('NoMatchingParent', `${field}: ${what} not found`);
    if (service.spec?.type === 'ExternalName' || service.spec?.clusterIP === 'None') {
      return fail(
        'UnsupportedValue',
        `${field}: ${what} is ${service.spec?.type === 'ExternalName' ? 'an ExternalName' : 'a headless'} Service; it has no frontend to route`,
      );
    }
    if (!meshServices.has(`${normalized.namespace}/${normalized.name}`)) {
      return fail(
        'NoMatchingParent',
        `${field}: ${what} is left out of the mesh (--mesh-namespaces, or the label clusterset-gateway.io/mesh: disabled on it or its Namespace)`,
      );
    }
    ports = service.spec?.ports ?? [];
  } else {
    const serviceImport = snapshot.get('ServiceImport', normalized.namespace, normalized.name);
    if (!serviceImport) return fail('NoMatchingParent', `${field}: ${what} not found`);
    const spec = serviceImportSpec(serviceImport);
    if (spec.type === 'Headless') {
      return fail('UnsupportedValue', `${field}: ${what} is Headless; it has no frontend to route`);
    }
    ports = spec.ports ?? [];
  }
  const selected = ports.filter(
    (p) =>
      (normalized.port === undefined || p.port === normalized.port) &&
      (normalized.sectionName === undefined || p.name === normalized.sectionName),
  );
  if (selected.length === 0) {
    const wanted = [
      normalized.sectionName !== undefined ? `port name ${normalized.sectionName}` : undefined,
      normalized.port !== undefined ? `port ${normalized.port}` : undefined,
    ]
      .filter((s) => s !== undefined)
      .join(' and ');
    return fail('NoMatchingParent', `${field}: ${what} has no ${wanted || 'ports'}`);
  }
  return { kind, ports: [...new Set(selected.map((p) => p.port))] };
}

function fail(reason: MeshParentReason, message: string): { problem: Problem<MeshParentReason> } {
  return { problem: { reason, message } };
}
