/**
 * Why a client's TLS handshake with an HTTPS listener failed, as a low-cardinality reason for
 * clusterset_gateway_rejected_requests_total and the rate-limited log line. `undefined`: the client went away
 * (a reset or a closed socket is not bad input worth counting).
 */
export function handshakeRefusalReason(err: Error & { code?: string }): string | undefined {
  const code = err.code ?? '';
  const message = err.message.toLowerCase();
  if (code === 'ECONNRESET' || code === 'EPIPE' || message.includes('socket disconnected')) return undefined;
  if (code === 'ERR_TLS_HANDSHAKE_TIMEOUT') return 'tls handshake timeout';
  if (
    code === 'ERR_SSL_PEER_DID_NOT_RETURN_A_CERTIFICATE' ||
    message.includes('did not return a certificate')
  ) {
    return 'tls client certificate missing';
  }
  if (
    message.includes('certificate verify failed') ||
    message.includes('unknown ca') ||
    message.includes('bad certificate') ||
    message.includes('certificate expired') ||
    message.includes('unsupported certificate')
  ) {
    return 'tls client certificate rejected';
  }
  if (
    message.includes('http request') ||
    message.includes('wrong version number') ||
    message.includes('unknown protocol')
  ) {
    return 'tls handshake not tls';
  }
  if (
    message.includes('no shared cipher') ||
    message.includes('unsupported protocol') ||
    message.includes('no application protocol') ||
    message.includes('version too low')
  ) {
    return 'tls handshake no common parameters';
  }
  return 'tls handshake failed';
}
