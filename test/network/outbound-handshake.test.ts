import { describe, expect, it } from 'vitest';
import {
  outboundHandshakeReason,
  SELF_PEER_CODE,
  WRONG_PEER_CODE,
} from '../../src/network/outbound-handshake.ts';

const failure = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe('why an outbound handshake with a network gateway failed', () => {
  it('tells the certificate problems apart', () => {
    expect(outboundHandshakeReason(failure(WRONG_PEER_CODE))).toBe('wrong-peer-identity');
    expect(outboundHandshakeReason(failure(SELF_PEER_CODE))).toBe('self');
    expect(outboundHandshakeReason(failure('CERT_HAS_EXPIRED'))).toBe('certificate-expired');
    expect(outboundHandshakeReason(failure('CERT_NOT_YET_VALID'))).toBe('certificate-not-yet-valid');
    expect(outboundHandshakeReason(failure('UNABLE_TO_VERIFY_LEAF_SIGNATURE'))).toBe('certificate-untrusted');
    expect(outboundHandshakeReason(failure('ERR_SSL_TLSV1_ALERT_UNKNOWN_CA'))).toBe('refused-by-peer');
  });

  it('says what the peer was when it was not a network gateway', () => {
    expect(outboundHandshakeReason(failure('ERR_SSL_WRONG_VERSION_NUMBER'))).toBe('not-tls');
    expect(outboundHandshakeReason(failure('ERR_SSL_TLSV1_ALERT_NO_APPLICATION_PROTOCOL'))).toBe('not-h2');
    expect(outboundHandshakeReason(failure('ECONNRESET'))).toBe('closed-by-peer');
    expect(outboundHandshakeReason(failure('ERR_SSL_SOMETHING_ELSE'))).toBe('handshake-failed');
  });

  it('counts no handshake when the address could not be reached', () => {
    expect(outboundHandshakeReason(failure('ECONNREFUSED'))).toBeUndefined();
    expect(outboundHandshakeReason(failure('EHOSTUNREACH'))).toBeUndefined();
  });
});
