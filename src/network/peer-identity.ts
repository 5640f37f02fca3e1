/**
 * Who a network gateway peer is: the SPIFFE ID in its certificate's URI SAN (`spiffe://<trust-domain>/cluster/
 * <name>`), and whether it may use this gateway. Pure.
 */

export interface SpiffeClusterId {
  readonly trustDomain: string;
  readonly cluster: string;
}

/** SPIFFE trust domain and path rules (SPIFFE-ID §2.1, §2.2): lower-case letters, digits, `.-_`. */
const SPIFFE_CLUSTER_ID = /^spiffe:\/\/([a-z0-9._-]{1,255})\/cluster\/([a-z0-9._-]{1,253})$/;

/**
 * The cluster SPIFFE ID of a certificate, from Node's `subjectaltname` string (`DNS:a, URI:spiffe://...`).
 * Exactly one URI SAN must be a cluster SPIFFE ID (an X.509-SVID has exactly one URI SAN); none or several: undefined.
 */
export function clusterIdOf(subjectAltName: string | undefined): SpiffeClusterId | undefined {
  if (!subjectAltName) return undefined;
  const ids: SpiffeClusterId[] = [];
  for (const entry of subjectAltName.split(', ')) {
    if (!entry.startsWith('URI:')) continue;
    const match = SPIFFE_CLUSTER_ID.exec(entry.slice(4));
    if (match === null) continue;
    ids.push({ trustDomain: match[1]!, cluster: match[2]! });
  }
  return ids.length === 1 ? ids[0] : undefined;
}

export function formatClusterId(id: SpiffeClusterId): string {
  return `spiffe://${id.trustDomain}/cluster/${id.cluster}`;
}

export interface PeerPolicy {
  /** This gateway's trust domain: peers must share it. */
  readonly trustDomain: string;
  /** `--network-allowed-clusters`: when set, only these clusters. */
  readonly allowedClusters?: ReadonlySet<string>;
}

export type PeerVerdict =
  | { readonly ok: true; readonly id: SpiffeClusterId }
  | { readonly ok: false; readonly reason: 'no-spiffe-id' | 'trust-domain' | 'cluster-not-allowed' };

export function authorizePeer(subjectAltName: string | undefined, policy: PeerPolicy): PeerVerdict {
  const id = clusterIdOf(subjectAltName);
  if (id === undefined) return { ok: false, reason: 'no-spiffe-id' };
  if (id.trustDomain !== policy.trustDomain) return { ok: false, reason: 'trust-domain' };
  if (policy.allowedClusters !== undefined && !policy.allowedClusters.has(id.cluster))
    return { ok: false, reason: 'cluster-not-allowed' };
  return { ok: true, id };
}

/**
 * Why a peer that finished the handshake is not authenticated, from Node's `authorizationError` code (the
 * listener verifies itself, rejectUnauthorized off, so that each reason is counted and answered alike).
 */
export function certificateRefusal(
  authorized: boolean,
  authorizationError: unknown,
  hasCertificate: boolean,
) {
  if (!hasCertificate) return 'no-client-certificate';
  if (authorized) return undefined;
  const code = String(authorizationError ?? '');
  if (code === 'CERT_HAS_EXPIRED') return 'certificate-expired';
  if (code === 'CERT_NOT_YET_VALID') return 'certificate-not-yet-valid';
  return 'certificate-untrusted';
}
