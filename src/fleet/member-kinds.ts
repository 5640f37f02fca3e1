import type { Normalize, NormalizeResult } from '../kube/normalize.ts';
import { BASE_KINDS, type WatchedKind } from '../kube/resource-kinds.ts';
import type { AnyResource, ResourceKind } from '../snapshot/resources.ts';

export type MemberKind = 'ServiceExport' | 'Service' | 'EndpointSlice' | 'ClusterProperty';

/** One of the kube source's kinds, as it watches it: the fleet reads members with the same versions and rules. */
function sourceKind<K extends ResourceKind>(kind: K): WatchedKind<K> {
  const found = BASE_KINDS.find((k): k is WatchedKind<K> => k.kind === kind);
  if (!found) throw new Error(`the kube source watches no ${kind}`);
  return found;
}

const SERVICE_IMPORT = sourceKind('ServiceImport');

/**
 * What is read from each member: all namespaces, list then watch. ServiceExport is no kind of the kube source's;
 * it is served by the same MCS CRD group and versions as ServiceImport.
 */
export const MEMBER_KINDS: readonly WatchedKind<MemberKind>[] = [
  { ...SERVICE_IMPORT, kind: 'ServiceExport', plural: 'serviceexports' },
  sourceKind('Service'),
  sourceKind('EndpointSlice'),
  sourceKind('ClusterProperty'),
];

/**
 * A ServiceExport's envelope, checked as the kube source checks its own kinds; the status is kept. ServiceExport
 * is no Snapshot kind: the store keeps it under AnyResource and only reads its metadata.
 */
export const normalizeServiceExport: Normalize = (value, apiVersion, kind): NormalizeResult => {
  if (typeof value !== 'object' || value === null) return { ok: false, reason: 'not an object' };
  const obj = { ...(value as Record<string, unknown>) };
  const meta = obj.metadata;
  if (typeof meta !== 'object' || meta === null) return { ok: false, reason: 'missing metadata' };
  const { managedFields: _m, ...metadata } = meta as Record<string, unknown>;
  if (typeof metadata.name !== 'string' || metadata.name === '')
    return { ok: false, reason: 'missing metadata.name' };
  if (typeof metadata.namespace !== 'string' || metadata.namespace === '')
    return { ok: false, reason: 'missing metadata.namespace' };
  obj.metadata = metadata;
  obj.apiVersion ??= apiVersion;
  obj.kind ??= kind;
  const { resourceVersion: _rv, ...stableMeta } = metadata;
  const fingerprint = JSON.stringify({ ...obj, metadata: stableMeta });
  return { ok: true, object: Object.freeze(obj) as unknown as AnyResource, fingerprint };
};
