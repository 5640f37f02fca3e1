import { createHash } from 'node:crypto';
import { apiGroupOf, decodeResource } from '../snapshot/decode.ts';
import { isRecord } from '../snapshot/json-object.ts';
import type { AnyResource } from '../snapshot/resources.ts';

export type NormalizeResult =
  | { readonly ok: true; readonly object: AnyResource; readonly fingerprint: string }
  | { readonly ok: false; readonly reason: string };

export type Normalize = (value: unknown, apiVersion: string, kind: string) => NormalizeResult;

/**
 * Whether a Secret's or ConfigMap's data is kept, by `namespace/name`: true when translation may read it (some
 * object references it). Without one, every Secret and ConfigMap keeps the keys translation reads.
 */
export type KeepsData = (kind: 'Secret' | 'ConfigMap', key: string) => boolean;

/** Kinds whose status this controller writes and translation never reads: our own writes must not rebuild. */
const STATUS_IGNORED = new Set([
  'GatewayClass',
  'Gateway',
  'HTTPRoute',
  'GRPCRoute',
  'TLSRoute',
  'TCPRoute',
  'UDPRoute',
  'ListenerSet',
  'BackendTLSPolicy',
]);
/** The data keys translation reads: listener and client certificates, CA bundles (src/gateway). */
const READ_KEYS: Readonly<Record<'Secret' | 'ConfigMap', readonly string[]>> = {
  Secret: ['tls.crt', 'tls.key'],
  ConfigMap: ['ca.crt'],
};
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';
const IDENTITY = ['name', 'namespace', 'uid', 'resourceVersion'] as const;
/** Secrets and ConfigMaps kept as metadata only because nothing referenced them when they were stored. */
const trimmed = new WeakSet<object>();

/** True when `object` is a Secret or ConfigMap stored without its data because nothing referenced it. */
export function isDataTrimmed(object: object): boolean {
  return trimmed.has(object);
}

/**
 * Validates the envelope (shared with the file source) and trims what the gateway does not use: managedFields,
 * kubectl's last-applied-configuration annotation, the status of objects we write status for, and of Secrets and ConfigMaps everything but their identity and the
 * keys translation reads, those too when `keepsData` says nothing references them (issue 28: a cluster's
 * Secrets are mostly not ours; their labels and annotations, kubectl's last-applied copy of the data included,
 * never matter). The fingerprint leaves out resourceVersion, so a change that cannot alter the output does not
 * rebuild: a trimmed Secret's new data is no change.
 */
export function normalizeObject(
  value: unknown,
  apiVersion: string,
  kind: string,
  keepsData?: KeepsData,
): NormalizeResult {
  if (!isRecord(value)) return { ok: false, reason: 'not an object' };
  // Items of built-in lists come without apiVersion/kind; watch events carry them first. Put first either way,
  // so that the fingerprint of a listed object equals that of the same object in a watch event.
  const withType: Record<string, unknown> = {
    apiVersion: value.apiVersion ?? apiVersion,
    kind: value.kind ?? kind,
    ...value,
  };
  // The watch chose the group (a configured ServiceImport kind), so the object's own group is the one to read.
  const decoded = decodeResource(withType, {
    serviceImportGroups: [apiGroupOf(String(withType.apiVersion))],
  });
  if (!decoded.ok) return { ok: false, reason: decoded.reason };
  const obj: Record<string, unknown> = { ...(decoded.object as unknown as Record<string, unknown>) };
  const metadata = isRecord(obj.metadata) ? { ...obj.metadata } : {};
  delete metadata.managedFields;
  // kubectl apply's copy of the whole object as applied: read by nothing here, and as large as the object.
  if (isRecord(metadata.annotations) && LAST_APPLIED in metadata.annotations) {
    const { [LAST_APPLIED]: _lastApplied, ...annotations } = metadata.annotations;
    if (Object.keys(annotations).length > 0) metadata.annotations = annotations;
    else delete metadata.annotations;
  }
  obj.metadata = metadata;
  if (STATUS_IGNORED.has(kind)) delete obj.status;
  let dataTrimmed = false;
  if (kind === 'Secret' || kind === 'ConfigMap') {
    const key = metadata.namespace
      ? `${String(metadata.namespace)}/${String(metadata.name)}`
      : String(metadata.name);
    dataTrimmed = keepsData !== undefined && !keepsData(kind, key);
    keepIdentityAndReadKeys(obj, kind, dataTrimmed);
  }
  const { resourceVersion: _rv, ...stableMeta } = obj.metadata as Record<string, unknown>;
  // The store keeps the fingerprint beside the object: a Secret's data goes in as a digest, not a second copy.
  const stable: Record<string, unknown> = { ...obj, metadata: stableMeta };
  if (obj.data !== undefined && (kind === 'Secret' || kind === 'ConfigMap'))
    stable.data = createHash('sha256').update(JSON.stringify(obj.data)).digest('base64');
  const fingerprint = JSON.stringify(stable);
  const object = Object.freeze(obj);
  if (dataTrimmed) trimmed.add(object);
  return { ok: true, object: object as unknown as AnyResource, fingerprint };
}

function keepIdentityAndReadKeys(
  obj: Record<string, unknown>,
  kind: 'Secret' | 'ConfigMap',
  dropData: boolean,
): void {
  const metadata = obj.metadata as Record<string, unknown>;
  const identity: Record<string, unknown> = {};
  for (const field of IDENTITY) if (metadata[field] !== undefined) identity[field] = metadata[field];
  obj.metadata = identity;
  const data = isRecord(obj.data) ? obj.data : {};
  delete obj.data;
  delete obj.binaryData;
  delete obj.immutable;
  if (dropData) return;
  const kept: Record<string, string> = {};
  for (const key of READ_KEYS[kind]) if (typeof data[key] === 'string') kept[key] = data[key];
  obj.data = kept;
}
