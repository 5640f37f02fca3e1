import { X509Certificate } from 'node:crypto';
import type { Snapshot } from '../snapshot/snapshot.ts';
import { GATEWAY_GROUP } from './defaults.ts';
import { isReferenceAllowed } from './reference-grants.ts';

export type CaBundleReason = 'InvalidKind' | 'InvalidCACertificateRef' | 'RefNotPermitted';

export interface CaReference {
  readonly group?: string;
  readonly kind?: string;
  readonly name: string;
  readonly namespace?: string;
}

export type CaBundleResolution =
  | { readonly ok: true; readonly caPem: string }
  | { readonly ok: false; readonly reason: CaBundleReason; readonly message: string };

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/**
 * CA certificate references (BackendTLSPolicy.validation.caCertificateRefs, Gateway frontend validation):
 * core ConfigMaps whose `ca.crt` holds PEM certificates. Every ref must resolve to at least one certificate
 * that parses; the first failure names the reason. The bundle is every certificate, in ref order.
 */
export function resolveCaBundle(
  snapshot: Snapshot,
  refs: readonly CaReference[],
  field: string,
  from: { readonly kind: string; readonly namespace: string },
): CaBundleResolution {
  const pems: string[] = [];
  for (const [i, ref] of refs.entries()) {
    const group = ref.group ?? '';
    const kind = ref.kind ?? 'ConfigMap';
    const namespace = ref.namespace ?? from.namespace;
    const where = `${field}[${i}] ${group === '' ? 'core' : group}/${kind} ${namespace}/${ref.name}`;
    if (group !== '' || kind !== 'ConfigMap') {
      return { ok: false, reason: 'InvalidKind', message: `${where}: only core ConfigMaps are supported` };
    }
    const allowed = isReferenceAllowed(
      snapshot,
      { group: GATEWAY_GROUP, kind: from.kind, namespace: from.namespace },
      { group: '', kind: 'ConfigMap', namespace, name: ref.name },
    );
    if (!allowed) {
      return { ok: false, reason: 'RefNotPermitted', message: `${where}: no ReferenceGrant allows it` };
    }
    const configMap = snapshot.get('ConfigMap', namespace, ref.name);
    if (!configMap) {
      return { ok: false, reason: 'InvalidCACertificateRef', message: `${where}: ConfigMap not found` };
    }
    const certificates = parseCertificates(configMap.data?.['ca.crt'] ?? '');
    if (certificates.length === 0) {
      return {
        ok: false,
        reason: 'InvalidCACertificateRef',
        message: `${where}: ca.crt holds no valid PEM certificate`,
      };
    }
    pems.push(...certificates);
  }
  if (pems.length === 0) {
    return { ok: false, reason: 'InvalidCACertificateRef', message: `${field}: no CA certificate given` };
  }
  return { ok: true, caPem: `${pems.join('\n')}\n` };
}

/** The PEM certificates of a bundle that parse; garbage between or inside blocks is skipped. */
export function parseCertificates(bundle: string): string[] {
  const out: string[] = [];
  for (const match of bundle.matchAll(PEM_CERTIFICATE)) {
    try {
      new X509Certificate(match[0]);
      out.push(match[0]);
    } catch {
      // A block that does not parse is not a certificate; the others still count.
    }
  }
  return out;
}
