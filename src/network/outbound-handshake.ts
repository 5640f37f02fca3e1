/**
 * Why this gateway's TLS handshake with another network's gateway failed, as a low-cardinality reason for
 * `clusterset_gateway_network_outbound_handshake_failures_total` and /config_dump. Pure. `undefined`: no
 * handshake was tried (the address refused or could not be reached; that is a failed tunnel, counted there).
 */

/** The code this gateway gives a certificate that does not name the cluster it dialled for. */
export const WRONG_PEER_CODE = 'CSG_WRONG_PEER';
/** The code this gateway gives a certificate that names this very cluster: the address leads back to itself. */
export const SELF_PEER_CODE = 'CSG_SELF_PEER';

const NOT_REACHED = new Set([
  'ECONNREFUSED',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ETIMEDOUT',
  'EADDRNOTAVAIL',
  'ENOTFOUND',
]);
const UNTRUSTED = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'CERT_SIGNATURE_FAILURE',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'INVALID_CA',
]);

export function outboundHandshakeReason(err: Error & { code?: string }): string | undefined {
  const code = err.code ?? '';
  if (NOT_REACHED.has(code)) return undefined;
  if (code === WRONG_PEER_CODE) return 'wrong-peer-identity';
  if (code === SELF_PEER_CODE) return 'self';
  if (code === 'CERT_HAS_EXPIRED') return 'certificate-expired';
  if (code === 'CERT_NOT_YET_VALID') return 'certificate-not-yet-valid';
  if (UNTRUSTED.has(code)) return 'certificate-untrusted';
  if (
    code === 'ERR_SSL_TLSV1_ALERT_NO_APPLICATION_PROTOCOL' ||
    /alpn|application protocol/i.test(err.message)
  )
    return 'not-h2';
  if (code === 'ERR_SSL_WRONG_VERSION_NUMBER' || code === 'ERR_SSL_PACKET_LENGTH_TOO_LONG') return 'not-tls';
  // The peer's alert: it refused our certificate (unknown CA, expired, none) or the parameters.
  if (code.startsWith('ERR_SSL_') && code.includes('ALERT')) return 'refused-by-peer';
  if (code === 'ECONNRESET' || code === 'EPIPE') return 'closed-by-peer';
  if (code === 'ERR_TLS_HANDSHAKE_TIMEOUT') return 'handshake-timeout';
  return 'handshake-failed';
}
