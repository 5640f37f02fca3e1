import { createPrivateKey, X509Certificate } from 'node:crypto';
import type { TlsConfig } from '../ir/route-table.ts';
import type { Gateway, Listener, ListenerSet } from '../snapshot/resources.ts';
import type { Snapshot } from '../snapshot/snapshot.ts';
import type { Problem } from './conditions.ts';
import { GATEWAY_GROUP } from './defaults.ts';
import { isReferenceAllowed } from './reference-grants.ts';

export type CertificateReason = 'InvalidCertificateRef' | 'RefNotPermitted';

export type CertificateResolution =
  | { readonly ok: true; readonly tls: TlsConfig }
  | ({ readonly ok: false } & Problem<CertificateReason>);

/**
 * Listener.tls.certificateRefs for TLS termination: core support is a `kubernetes.io/tls` Secret (group "",
 * kind Secret); another namespace needs a ReferenceGrant from the Gateway's namespace. Every ref must resolve:
 * the first failure makes the listener ResolvedRefs=False (InvalidCertificateRef or RefNotPermitted).
 */
export function resolveListenerCertificates(
  snapshot: Snapshot,
  gateway: Gateway | ListenerSet,
  listener: Listener,
  listenerIndex: number,
): CertificateResolution {
  // A ListenerSet's certificate refs are its own: ReferenceGrants name it (kind ListenerSet) and its namespace.
  const gatewayNamespace = gateway.metadata.namespace ?? 'default';
  const refs = listener.tls?.certificateRefs ?? [];
  const field = `spec.listeners[${listenerIndex}].tls.certificateRefs`;
  if (refs.length === 0) {
    return fail('InvalidCertificateRef', `${field}: an HTTPS listener needs at least one certificateRef`);
  }
  const certificates: TlsConfig['certificates'][number][] = [];
  for (const [i, ref] of refs.entries()) {
    const group = ref.group ?? '';
    const kind = ref.kind ?? 'Secret';
    const namespace = ref.namespace ?? gatewayNamespace;
    const where = `${field}[${i}] ${group === '' ? 'core' : group}/${kind} ${namespace}/${ref.name}`;
    if (group !== '' || kind !== 'Secret') {
      return fail('InvalidCertificateRef', `${where}: only core Secrets are supported`);
    }
    const allowed = isReferenceAllowed(
      snapshot,
      { group: GATEWAY_GROUP, kind: gateway.kind, namespace: gatewayNamespace },
      { group: '', kind: 'Secret', namespace, name: ref.name },
    );
    if (!allowed) {
      return fail('RefNotPermitted', `${where}: no ReferenceGrant in ${namespace} allows it`);
    }
    const secret = snapshot.get('Secret', namespace, ref.name);
    if (!secret) return fail('InvalidCertificateRef', `${where}: Secret not found`);
    const certPem = decodeBase64(secret.data?.['tls.crt']);
    const keyPem = decodeBase64(secret.data?.['tls.key']);
    if (!certPem || !keyPem) {
      return fail('InvalidCertificateRef', `${where}: Secret lacks tls.crt or tls.key`);
    }
    const invalid = pemProblem(certPem, keyPem);
    if (invalid) return fail('InvalidCertificateRef', `${where}: ${invalid}`);
    certificates.push({ secret: `${namespace}/${ref.name}`, certPem, keyPem });
  }
  return { ok: true, tls: { certificates } };
}

function fail(reason: CertificateReason, message: string): CertificateResolution {
  return { ok: false, reason, message };
}

function decodeBase64(value: string | undefined): string | undefined {
  if (!value) return undefined;
  const text = Buffer.from(value, 'base64').toString('utf8');
  return text === '' ? undefined : text;
}

/** Parsing is pure (no I/O); it catches what a TLS server would reject at load time. */
function pemProblem(certPem: string, keyPem: string): string | undefined {
  try {
    new X509Certificate(certPem);
  } catch {
    return 'tls.crt is not a PEM certificate';
  }
  try {
    createPrivateKey(keyPem);
  } catch {
    return 'tls.key is not a PEM private key';
  }
  return undefined;
}
