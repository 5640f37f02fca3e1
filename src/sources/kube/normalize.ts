import type { AnyResource } from '../../snapshot/resources.ts';
import { apiGroupOf, decodeResource, isRecord } from '../decode.ts';

export type NormalizeResult =
  | { readonly ok: true; readonly object: AnyResource; readonly fingerprint: string }
  | { readonly ok: false; readonly reason: string };

export type Normalize = (value: unknown, apiVersion: string, kind: string) => NormalizeResult;

/** Kinds whose status this controller writes and translation never reads: our own writes must not rebuild. */
const STATUS_IGNORED = new Set([
  'GatewayClass',
  'Gateway',
  'HTTPRoute',
  'GRPCRoute',
  'TLSRoute',
  'ListenerSet',
  'BackendTLSPolicy',
]);
const TLS_KEYS = ['tls.crt', 'tls.key'];

/**
 * Validates the envelope (shared with the file source) and trims what the gateway does not use: managedFields,
 * the status of objects we write status for, and the data of Secrets that cannot be certificates. The
 * fingerprint leaves out resourceVersion, so a change that cannot alter the output does not rebuild.
 */
export function normalizeObject(value: unknown, apiVersion: string, kind: string): NormalizeResult {
  if (!isRecord(value)) return { ok: false, reason: 'not an object' };
  // Items of built-in lists come without apiVersion/kind; watch events carry them.
  const withType: Record<string, unknown> = {
    ...value,
    apiVersion: value.apiVersion ?? apiVersion,
    kind: value.kind ?? kind,
  };
  // The watch chose the group (a configured ServiceImport kind), so the object's own group is the one to read.
  const decoded = decodeResource(withType, {
    serviceImportGroups: [apiGroupOf(String(withType.apiVersion))],
  });
  if (!decoded.ok) return { ok: false, reason: decoded.reason };
  const obj: Record<string, unknown> = { ...(decoded.object as unknown as Record<string, unknown>) };
  const metadata = isRecord(obj.metadata) ? { ...obj.metadata } : {};
  delete metadata.managedFields;
  obj.metadata = metadata;
  if (STATUS_IGNORED.has(kind)) delete obj.status;
  if (kind === 'Secret' && !isCertificateSecret(obj)) delete obj.data;
  // ConfigMaps matter only as CA bundles: keep `ca.crt` and nothing else, so memory stays bounded.
  if (kind === 'ConfigMap') {
    const caCrt = isRecord(obj.data) ? obj.data['ca.crt'] : undefined;
    obj.data = typeof caCrt === 'string' ? { 'ca.crt': caCrt } : {};
    delete obj.binaryData;
  }
  const { resourceVersion: _rv, ...stableMeta } = metadata;
  const fingerprint = JSON.stringify({ ...obj, metadata: stableMeta });
  return { ok: true, object: Object.freeze(obj) as unknown as AnyResource, fingerprint };
}

/** Listener certificateRefs name `kubernetes.io/tls` Secrets; Opaque ones with the same keys are tolerated. */
function isCertificateSecret(obj: Record<string, unknown>): boolean {
  if (obj.type === 'kubernetes.io/tls') return true;
  return (
    isRecord(obj.data) && TLS_KEYS.every((k) => typeof (obj.data as Record<string, unknown>)[k] === 'string')
  );
}
