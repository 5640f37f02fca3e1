import { isRecord } from '../snapshot/json-object.ts';
import { childPath, indexPath, keyPath } from './field-errors.ts';

/**
 * The field names of a typed Kubernetes object, as strict decoding knows them from its Go struct: what
 * `fieldValidation=Strict` reports as `unknown field "spec.foo"` for built-in kinds and for every object's
 * metadata (apimachinery decodes ObjectMeta strictly for custom resources too). Types are checked elsewhere.
 */
export type KnownFields =
  | true
  | { readonly fields: Readonly<Record<string, KnownFields>> }
  | { readonly items: KnownFields }
  | { readonly values: KnownFields };

const LEAF: KnownFields = true;
const fields = (f: Record<string, KnownFields>): KnownFields => ({ fields: f });
const list = (items: KnownFields): KnownFields => ({ items });
const map = (values: KnownFields): KnownFields => ({ values });
const leaves = (...names: string[]): KnownFields => fields(Object.fromEntries(names.map((n) => [n, LEAF])));

/** metav1.ObjectMeta. */
export const OBJECT_META: KnownFields = fields({
  name: LEAF,
  generateName: LEAF,
  namespace: LEAF,
  selfLink: LEAF,
  uid: LEAF,
  resourceVersion: LEAF,
  generation: LEAF,
  creationTimestamp: LEAF,
  deletionTimestamp: LEAF,
  deletionGracePeriodSeconds: LEAF,
  labels: LEAF,
  annotations: LEAF,
  ownerReferences: list(leaves('apiVersion', 'kind', 'name', 'uid', 'controller', 'blockOwnerDeletion')),
  finalizers: LEAF,
  // fieldsV1 is free-form (a field set): a leaf here.
  managedFields: list(
    leaves('manager', 'operation', 'apiVersion', 'time', 'fieldsType', 'fieldsV1', 'subresource'),
  ),
});

const CONDITION = leaves('type', 'status', 'observedGeneration', 'lastTransitionTime', 'reason', 'message');
const TYPE_META: Record<string, KnownFields> = { apiVersion: LEAF, kind: LEAF, metadata: OBJECT_META };

/** The built-in kinds the gateway reads, by `apiVersion/kind` (Kubernetes 1.33). */
export const BUILT_IN_FIELDS: ReadonlyMap<string, KnownFields> = new Map<string, KnownFields>([
  [
    'v1/Service',
    fields({
      ...TYPE_META,
      spec: fields({
        ports: list(leaves('name', 'protocol', 'appProtocol', 'port', 'targetPort', 'nodePort')),
        selector: LEAF,
        clusterIP: LEAF,
        clusterIPs: LEAF,
        type: LEAF,
        externalIPs: LEAF,
        sessionAffinity: LEAF,
        loadBalancerIP: LEAF,
        loadBalancerSourceRanges: LEAF,
        externalName: LEAF,
        externalTrafficPolicy: LEAF,
        healthCheckNodePort: LEAF,
        publishNotReadyAddresses: LEAF,
        sessionAffinityConfig: fields({ clientIP: leaves('timeoutSeconds') }),
        ipFamilies: LEAF,
        ipFamilyPolicy: LEAF,
        allocateLoadBalancerNodePorts: LEAF,
        loadBalancerClass: LEAF,
        internalTrafficPolicy: LEAF,
        trafficDistribution: LEAF,
      }),
      status: fields({
        loadBalancer: fields({
          ingress: list(
            fields({
              ip: LEAF,
              hostname: LEAF,
              ipMode: LEAF,
              ports: list(leaves('port', 'protocol', 'error')),
            }),
          ),
        }),
        conditions: list(CONDITION),
      }),
    }),
  ],
  ['v1/Secret', fields({ ...TYPE_META, data: LEAF, stringData: LEAF, type: LEAF, immutable: LEAF })],
  ['v1/ConfigMap', fields({ ...TYPE_META, data: LEAF, binaryData: LEAF, immutable: LEAF })],
  [
    'v1/Namespace',
    fields({
      ...TYPE_META,
      spec: leaves('finalizers'),
      status: fields({ phase: LEAF, conditions: list(CONDITION) }),
    }),
  ],
  [
    'discovery.k8s.io/v1/EndpointSlice',
    fields({
      ...TYPE_META,
      addressType: LEAF,
      endpoints: list(
        fields({
          addresses: LEAF,
          conditions: leaves('ready', 'serving', 'terminating'),
          hostname: LEAF,
          targetRef: leaves('kind', 'namespace', 'name', 'uid', 'apiVersion', 'resourceVersion', 'fieldPath'),
          nodeName: LEAF,
          zone: LEAF,
          hints: fields({ forZones: list(leaves('name')), forNodes: list(leaves('name')) }),
          deprecatedTopology: map(LEAF),
        }),
      ),
      ports: list(leaves('name', 'protocol', 'port', 'appProtocol')),
    }),
  ],
]);

/** The paths of the fields `value` has and `known` does not, in the order they are written. */
export function unknownFieldPaths(known: KnownFields, value: unknown, path = ''): string[] {
  const out: string[] = [];
  walk(known, value, path, out);
  return out;
}

function walk(known: KnownFields, value: unknown, path: string, out: string[]): void {
  if (known === true) return;
  if ('items' in known) {
    if (Array.isArray(value)) {
      for (const [i, item] of value.entries()) walk(known.items, item, indexPath(path, i), out);
    }
    return;
  }
  if (!isRecord(value)) return;
  if ('values' in known) {
    for (const [key, child] of Object.entries(value)) walk(known.values, child, keyPath(path, key), out);
    return;
  }
  for (const [key, child] of Object.entries(value)) {
    const field = known.fields[key];
    if (field === undefined) out.push(childPath(path, key));
    else walk(field, child, childPath(path, key), out);
  }
}
