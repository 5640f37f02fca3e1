import { describe, expect, it } from 'vitest';
import { handshakeRefusalReason } from '../../src/net/tls-handshake-errors.ts';

const error = (message: string, code?: string) => Object.assign(new Error(message), code ? { code } : {});

describe('handshakeRefusalReason', () => {
  it.each([
    [
      error('Client network socket disconnected before secure TLS connection was established', 'ECONNRESET'),
      undefined,
    ],
    [error('read ECONNRESET', 'ECONNRESET'), undefined],
    [error('TLS handshake timeout', 'ERR_TLS_HANDSHAKE_TIMEOUT'), 'tls handshake timeout'],
    [
      error('peer did not return a certificate', 'ERR_SSL_PEER_DID_NOT_RETURN_A_CERTIFICATE'),
      'tls client certificate missing',
    ],
    [error('error:0A000418:SSL routines::tlsv1 alert unknown ca'), 'tls client certificate rejected'],
    [error('error:0A00009C:SSL routines::http request', 'ERR_SSL_HTTP_REQUEST'), 'tls handshake not tls'],
    [error('error:0A00010B:SSL routines::wrong version number'), 'tls handshake not tls'],
    [error('error:0A0000C1:SSL routines::no shared cipher'), 'tls handshake no common parameters'],
    [error('error:0A000102:SSL routines::unsupported protocol'), 'tls handshake no common parameters'],
    [error('something new'), 'tls handshake failed'],
  ])('%s → %s', (err, reason) => {
    expect(handshakeRefusalReason(err)).toBe(reason);
  });
});
