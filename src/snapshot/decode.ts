import { isRecord } from './json-object.ts';
import type { AnyResource, ResourceKind } from './resources.ts';
import { RESOURCE_KINDS } from './resources.ts';

/**
 * The one place where `unknown` from YAML or the API server becomes a typed resource: past it, no code checks
 * shapes again.
 * Checks the envelope every kind shares; the translator tolerates missing or odd `spec` fields and reports
 * them as conditions, so one bad object never stops the others.
 */
export type DecodeResult =
  | { readonly ok: true; readonly object: AnyResource }
  | { readonly ok: false; readonly ignored: true; readonly reason: string }
  | { readonly ok: false; readonly ignored: false; readonly reason: string };

const KNOWN_KINDS: ReadonlySet<string> = new Set(RESOURCE_KINDS);

/** The API groups each kind may come from; anything else is a different resource with the same kind name. */
const GROUPS_BY_KIND: Readonly<Record<ResourceKind, readonly string[]>> = {
  GatewayClass: ['gateway.networking.k8s.io'],
  Gateway: ['gateway.networking.k8s.io'],
  HTTPRoute: ['gateway.networking.k8s.io'],
  GRPCRoute: ['gateway.networking.k8s.io'],
  ListenerSet: ['gateway.networking.k8s.io'],
  ReferenceGrant: ['gateway.networking.k8s.io'],
  Service: [''],
  Secret: [''],
  Namespace: [''],
  EndpointSlice: ['discovery.k8s.io'],
  // The default; `DecodeOptions.serviceImportGroups` (from --service-import-kinds) replaces it.
  ServiceImport: ['multicluster.x-k8s.io', 'net.gke.io'],
  ClusterProperty: ['about.k8s.io'],
  ClusterProfile: ['multicluster.x-k8s.io'],
  TLSRoute: ['gateway.networking.k8s.io'],
  TCPRoute: ['gateway.networking.k8s.io'],
  UDPRoute: ['gateway.networking.k8s.io'],
  BackendTLSPolicy: ['gateway.networking.k8s.io'],
  XBackendTrafficPolicy: ['gateway.networking.x-k8s.io'],
  ConfigMap: [''],
  ClusterSelectionPolicy: ['policy.clusterset-gateway.io'],
};

export function apiGroupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

export interface DecodeOptions {
  /** API groups whose ServiceImport kind is read (GEP-1748 `--service-import-kinds`); default as above. */
  readonly serviceImportGroups?: readonly string[];
}

export function decodeResource(value: unknown, options: DecodeOptions = {}): DecodeResult {
  if (!isRecord(value)) return fail('a Kubernetes object must be a mapping');
  const { apiVersion, kind, metadata } = value;
  if (typeof apiVersion !== 'string' || apiVersion === '') return fail('missing apiVersion');
  if (typeof kind !== 'string' || kind === '') return fail('missing kind');
  if (!KNOWN_KINDS.has(kind)) return { ok: false, ignored: true, reason: `kind ${kind} is not watched` };
  const resourceKind = kind as ResourceKind;
  const groups =
    resourceKind === 'ServiceImport' && options.serviceImportGroups !== undefined
      ? options.serviceImportGroups
      : GROUPS_BY_KIND[resourceKind];
  if (!groups.includes(apiGroupOf(apiVersion))) {
    return { ok: false, ignored: true, reason: `${apiVersion} ${kind} is not a resource this gateway reads` };
  }
  if (!isRecord(metadata)) return fail(`${kind}: missing metadata`);
  if (typeof metadata.name !== 'string' || metadata.name === '')
    return fail(`${kind}: missing metadata.name`);
  if (metadata.namespace !== undefined && typeof metadata.namespace !== 'string') {
    return fail(`${kind} ${metadata.name}: metadata.namespace must be a string`);
  }
  for (const field of ['labels', 'annotations'] as const) {
    if (metadata[field] !== undefined && !isStringMap(metadata[field])) {
      return fail(`${kind} ${metadata.name}: metadata.${field} must map strings to strings`);
    }
  }
  if (value.spec !== undefined && !isRecord(value.spec))
    return fail(`${kind} ${metadata.name}: spec must be a mapping`);
  return { ok: true, object: normalize(resourceKind, value) as unknown as AnyResource };
}

/** Folds what different API versions or input forms put elsewhere into the shape of resources.ts. */
function normalize(kind: ResourceKind, value: Record<string, unknown>): Record<string, unknown> {
  // Folded only when both maps hold strings: otherwise validation refuses the Secret as the API server would,
  // instead of a malformed map being dropped here without a word.
  if (
    kind === 'Secret' &&
    isStringMap(value.stringData) &&
    (value.data === undefined || isStringMap(value.data))
  ) {
    const data: Record<string, string> = { ...(value.data ?? {}) };
    for (const [key, text] of Object.entries(value.stringData)) {
      data[key] = Buffer.from(text, 'utf8').toString('base64');
    }
    const { stringData: _, ...rest } = value;
    return { ...rest, data };
  }
  if (kind === 'ServiceImport') {
    // MCS API v1beta1 may carry ports/ips/type at the top level; v1alpha1 keeps them in spec.
    const spec: Record<string, unknown> = { ...(isRecord(value.spec) ? value.spec : {}) };
    for (const field of ['ports', 'ips', 'type', 'sessionAffinity', 'trafficDistribution']) {
      if (value[field] !== undefined && spec[field] === undefined) spec[field] = value[field];
    }
    return { ...value, spec };
  }
  return value;
}

function fail(reason: string): DecodeResult {
  return { ok: false, ignored: false, reason };
}

function isStringMap(value: unknown): value is Record<string, string> {
  return isRecord(value) && Object.values(value).every((v) => typeof v === 'string');
}
