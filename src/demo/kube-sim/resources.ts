import type { StatusCause, Target } from './api-status.ts';
import { admitCustomResource } from './crd-admission.ts';
import type { JsonObject } from './json.ts';
import type { NameRule } from './validation.ts';
import {
  validateEndpointSlice,
  validateEvent,
  validateLease,
  validateNamespace,
  validateSecret,
  validateService,
} from './validation.ts';

/** One REST resource as kube-apiserver serves it; `crd` names the CustomResourceDefinition that provides it. */
export interface ResourceDef {
  readonly group: string;
  /** Served versions, the preferred (storage) version first. */
  readonly versions: readonly string[];
  readonly resource: string;
  readonly singular: string;
  readonly kind: string;
  readonly namespaced: boolean;
  readonly status: boolean;
  /** metadata.generation is maintained (CRDs and most built-ins with a spec). */
  readonly generation: boolean;
  readonly crd?: string;
  readonly nameRule: NameRule;
  readonly shortNames?: readonly string[];
  /** Field selectors supported besides metadata.name and metadata.namespace. */
  readonly fieldSelectors?: readonly string[];
  /** Validation; for custom resources also the CRD's pruning and defaulting, applied to `obj` in place. */
  readonly validate: (obj: JsonObject, old?: JsonObject) => StatusCause[];
  /** Built-in defaulting a real server applies on create. */
  readonly defaults?: (obj: JsonObject) => void;
}

const GATEWAY_GROUP = 'gateway.networking.k8s.io';
const MCS_GROUP = 'multicluster.x-k8s.io';
const ABOUT_GROUP = 'about.k8s.io';

export const RESOURCES: readonly ResourceDef[] = [
  {
    group: '',
    versions: ['v1'],
    resource: 'namespaces',
    singular: 'namespace',
    kind: 'Namespace',
    namespaced: false,
    status: true,
    generation: false,
    nameRule: 'label',
    shortNames: ['ns'],
    fieldSelectors: ['status.phase'],
    validate: validateNamespace,
    defaults: (obj) => {
      obj.spec = { finalizers: ['kubernetes'] };
      obj.status = { phase: 'Active' };
    },
  },
  {
    group: '',
    versions: ['v1'],
    resource: 'services',
    singular: 'service',
    kind: 'Service',
    namespaced: true,
    status: true,
    generation: false,
    nameRule: 'dns1035',
    shortNames: ['svc'],
    fieldSelectors: ['spec.clusterIP', 'spec.type'],
    validate: validateService,
  },
  {
    group: '',
    versions: ['v1'],
    resource: 'secrets',
    singular: 'secret',
    kind: 'Secret',
    namespaced: true,
    status: false,
    generation: false,
    nameRule: 'subdomain',
    fieldSelectors: ['type'],
    validate: validateSecret,
  },
  {
    group: '',
    versions: ['v1'],
    resource: 'configmaps',
    singular: 'configmap',
    kind: 'ConfigMap',
    namespaced: true,
    status: false,
    generation: false,
    nameRule: 'subdomain',
    shortNames: ['cm'],
    validate: () => [],
  },
  {
    group: '',
    versions: ['v1'],
    resource: 'events',
    singular: 'event',
    kind: 'Event',
    namespaced: true,
    status: false,
    generation: false,
    nameRule: 'subdomain',
    shortNames: ['ev'],
    fieldSelectors: [
      'involvedObject.kind',
      'involvedObject.name',
      'involvedObject.namespace',
      'reason',
      'type',
    ],
    validate: validateEvent,
  },
  {
    group: 'discovery.k8s.io',
    versions: ['v1'],
    resource: 'endpointslices',
    singular: 'endpointslice',
    kind: 'EndpointSlice',
    namespaced: true,
    status: false,
    generation: true,
    nameRule: 'subdomain',
    fieldSelectors: ['addressType'],
    validate: validateEndpointSlice,
  },
  {
    group: 'coordination.k8s.io',
    versions: ['v1'],
    resource: 'leases',
    singular: 'lease',
    kind: 'Lease',
    namespaced: true,
    status: false,
    generation: false,
    nameRule: 'subdomain',
    validate: validateLease,
  },
  {
    group: GATEWAY_GROUP,
    versions: ['v1', 'v1beta1'],
    resource: 'gatewayclasses',
    singular: 'gatewayclass',
    kind: 'GatewayClass',
    namespaced: false,
    status: true,
    generation: true,
    crd: `gatewayclasses.${GATEWAY_GROUP}`,
    nameRule: 'subdomain',
    shortNames: ['gc'],
    validate: admitCustomResource,
  },
  {
    group: GATEWAY_GROUP,
    versions: ['v1', 'v1beta1'],
    resource: 'gateways',
    singular: 'gateway',
    kind: 'Gateway',
    namespaced: true,
    status: true,
    generation: true,
    crd: `gateways.${GATEWAY_GROUP}`,
    nameRule: 'subdomain',
    shortNames: ['gtw'],
    validate: admitCustomResource,
  },
  {
    group: GATEWAY_GROUP,
    versions: ['v1', 'v1beta1'],
    resource: 'httproutes',
    singular: 'httproute',
    kind: 'HTTPRoute',
    namespaced: true,
    status: true,
    generation: true,
    crd: `httproutes.${GATEWAY_GROUP}`,
    nameRule: 'subdomain',
    validate: admitCustomResource,
  },
  {
    group: GATEWAY_GROUP,
    versions: ['v1'],
    resource: 'grpcroutes',
    singular: 'grpcroute',
    kind: 'GRPCRoute',
    namespaced: true,
    status: true,
    generation: true,
    crd: `grpcroutes.${GATEWAY_GROUP}`,
    nameRule: 'subdomain',
    validate: admitCustomResource,
  },
  {
    group: GATEWAY_GROUP,
    versions: ['v1'],
    resource: 'listenersets',
    singular: 'listenerset',
    kind: 'ListenerSet',
    namespaced: true,
    status: true,
    generation: true,
    crd: `listenersets.${GATEWAY_GROUP}`,
    nameRule: 'subdomain',
    shortNames: ['lset'],
    validate: admitCustomResource,
  },
  {
    group: GATEWAY_GROUP,
    versions: ['v1', 'v1beta1'],
    resource: 'referencegrants',
    singular: 'referencegrant',
    kind: 'ReferenceGrant',
    namespaced: true,
    status: false,
    generation: true,
    crd: `referencegrants.${GATEWAY_GROUP}`,
    nameRule: 'subdomain',
    shortNames: ['refgrant'],
    validate: admitCustomResource,
  },
  // TLS (issue 14): schema checks are left to the gateway's own tolerance of odd specs.
  {
    group: GATEWAY_GROUP,
    versions: ['v1', 'v1alpha2'],
    resource: 'tlsroutes',
    singular: 'tlsroute',
    kind: 'TLSRoute',
    namespaced: true,
    status: true,
    generation: true,
    crd: `tlsroutes.${GATEWAY_GROUP}`,
    nameRule: 'subdomain',
    validate: () => [],
  },
  // Layer 4 (issue 44).
  {
    group: GATEWAY_GROUP,
    versions: ['v1', 'v1alpha2'],
    resource: 'tcproutes',
    singular: 'tcproute',
    kind: 'TCPRoute',
    namespaced: true,
    status: true,
    generation: true,
    crd: `tcproutes.${GATEWAY_GROUP}`,
    nameRule: 'subdomain',
    validate: admitCustomResource,
  },
  {
    group: GATEWAY_GROUP,
    versions: ['v1', 'v1alpha2'],
    resource: 'udproutes',
    singular: 'udproute',
    kind: 'UDPRoute',
    namespaced: true,
    status: true,
    generation: true,
    crd: `udproutes.${GATEWAY_GROUP}`,
    nameRule: 'subdomain',
    validate: admitCustomResource,
  },
  {
    group: GATEWAY_GROUP,
    versions: ['v1'],
    resource: 'backendtlspolicies',
    singular: 'backendtlspolicy',
    kind: 'BackendTLSPolicy',
    namespaced: true,
    status: true,
    generation: true,
    crd: `backendtlspolicies.${GATEWAY_GROUP}`,
    nameRule: 'subdomain',
    shortNames: ['btlspolicy'],
    validate: () => [],
  },
  {
    group: MCS_GROUP,
    versions: ['v1beta1', 'v1alpha1'],
    resource: 'serviceimports',
    singular: 'serviceimport',
    kind: 'ServiceImport',
    namespaced: true,
    status: true,
    generation: true,
    crd: `serviceimports.${MCS_GROUP}`,
    nameRule: 'subdomain',
    shortNames: ['svcim'],
    validate: admitCustomResource,
  },
  {
    group: MCS_GROUP,
    versions: ['v1beta1', 'v1alpha1'],
    resource: 'serviceexports',
    singular: 'serviceexport',
    kind: 'ServiceExport',
    namespaced: true,
    status: true,
    generation: true,
    crd: `serviceexports.${MCS_GROUP}`,
    nameRule: 'subdomain',
    shortNames: ['svcex'],
    validate: admitCustomResource,
  },
  {
    group: MCS_GROUP,
    versions: ['v1alpha1'],
    resource: 'clusterprofiles',
    singular: 'clusterprofile',
    kind: 'ClusterProfile',
    namespaced: true,
    status: true,
    generation: true,
    crd: `clusterprofiles.${MCS_GROUP}`,
    nameRule: 'subdomain',
    validate: admitCustomResource,
  },
  {
    group: ABOUT_GROUP,
    versions: ['v1beta1', 'v1alpha1'],
    resource: 'clusterproperties',
    singular: 'clusterproperty',
    kind: 'ClusterProperty',
    namespaced: false,
    status: true,
    generation: true,
    crd: `clusterproperties.${ABOUT_GROUP}`,
    nameRule: 'subdomain',
    validate: admitCustomResource,
  },
  {
    group: 'policy.clusterset-gateway.io',
    versions: ['v1alpha1'],
    resource: 'clusterselectionpolicies',
    singular: 'clusterselectionpolicy',
    kind: 'ClusterSelectionPolicy',
    namespaced: true,
    status: true,
    generation: true,
    crd: 'clusterselectionpolicies.policy.clusterset-gateway.io',
    nameRule: 'subdomain',
    shortNames: ['csp'],
    validate: admitCustomResource,
  },
];

export const ALL_CRDS: readonly string[] = RESOURCES.flatMap((r) => (r.crd ? [r.crd] : []));

export function groupVersion(group: string, version: string): string {
  return group ? `${group}/${version}` : version;
}

export const VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

/** The resource of an object's `apiVersion` and `kind`. */
export function resourceDefOf(apiVersion: string, kind: string): ResourceDef {
  const slash = apiVersion.indexOf('/');
  const group = slash < 0 ? '' : apiVersion.slice(0, slash);
  const def = RESOURCES.find((r) => r.group === group && r.kind === kind);
  if (!def) throw new Error(`unknown resource ${apiVersion} ${kind}`);
  return def;
}

/** The resource by plural name, optionally `<plural>.<group>`. */
export function resourceDefNamed(resource: string): ResourceDef {
  const [plural, ...group] = resource.split('.');
  const def = RESOURCES.find(
    (r) => r.resource === plural && (group.length === 0 || r.group === group.join('.')),
  );
  if (!def) throw new Error(`unknown resource ${resource}`);
  return def;
}

/** The API status target naming `def` (and the object `name`) in a failure. */
export function resourceTarget(def: ResourceDef, name?: string): Target {
  return { group: def.group, kind: def.kind, resource: def.resource, ...(name ? { name } : {}) };
}
