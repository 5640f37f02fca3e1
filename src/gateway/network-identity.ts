import type { NetworkIdentityConfig } from '../ir/route-table.ts';
import type { Snapshot } from '../snapshot/snapshot.ts';

/** `--network-tls-secret` and `--network-trust-bundle-configmap`, each `namespace/name`. */
export interface NetworkIdentityRefs {
  readonly secret: string;
  readonly trustBundleConfigMap?: string;
}

/**
 * The network gateway's own identity from Kubernetes objects (docs/multi-network.md): a `kubernetes.io/tls`
 * Secret's `tls.crt` and `tls.key`, and the trust bundle from a ConfigMap's `ca.crt` (as trust-manager writes
 * it) or, without one, the Secret's own `ca.crt` (as cert-manager writes it). Only what is there is carried;
 * whether the key matches and the certificate names a cluster is the data plane's check, which keeps its last
 * good set when not. A problem names the objects and keys, never their data.
 */
export function translateNetworkIdentity(
  snapshot: Snapshot,
  refs: NetworkIdentityRefs,
): NetworkIdentityConfig {
  const secretName = `Secret ${refs.secret}`;
  const trustBundle =
    refs.trustBundleConfigMap !== undefined
      ? `ConfigMap ${refs.trustBundleConfigMap}`
      : `${secretName} ca.crt`;
  const base = { secret: secretName, trustBundle };
  const [namespace = '', name = ''] = refs.secret.split('/');
  const secret = snapshot.get('Secret', namespace, name);
  if (secret === undefined) return { ...base, problem: `${secretName} not found` };
  const certPem = decodeBase64(secret.data?.['tls.crt']);
  const keyPem = decodeBase64(secret.data?.['tls.key']);
  if (certPem === undefined || keyPem === undefined)
    return { ...base, problem: `${secretName} lacks tls.crt or tls.key` };
  let caPem: string | undefined;
  if (refs.trustBundleConfigMap !== undefined) {
    const [cmNamespace = '', cmName = ''] = refs.trustBundleConfigMap.split('/');
    const configMap = snapshot.get('ConfigMap', cmNamespace, cmName);
    if (configMap === undefined) return { ...base, problem: `${trustBundle} not found` };
    caPem = nonEmpty(configMap.data?.['ca.crt']);
  } else {
    caPem = decodeBase64(secret.data?.['ca.crt']);
  }
  if (caPem === undefined) return { ...base, problem: `${trustBundle} has no ca.crt` };
  return { ...base, certPem, keyPem, caPem };
}

function decodeBase64(value: string | undefined): string | undefined {
  return value ? nonEmpty(Buffer.from(value, 'base64').toString('utf8')) : undefined;
}

function nonEmpty(text: string | undefined): string | undefined {
  return text === undefined || text.trim() === '' ? undefined : text;
}
