import { checkServerIdentity, type PeerCertificate } from 'node:tls';
import { errors } from 'undici';
import { describe, expect, it } from 'vitest';
import { identityCheck } from '../../../src/proxy/upstream/tls-upstream.ts';
import { undiciFailureKind } from '../../../src/proxy/upstream/undici-failure.ts';

const nodeError = (code: string, message: string, syscall?: string): Error =>
  Object.assign(new Error(message), { code, ...(syscall ? { syscall } : {}) });

const otherHostCert = { subject: { CN: 'b.example' }, subjectaltname: 'DNS:b.example' } as PeerCertificate;

/** undici's own error classes and the Node and OpenSSL errors it passes on, as each reaches a handler. */
describe('undici failures in the data plane’s taxonomy', () => {
  it.each([
    ['refused', nodeError('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:9', 'connect'), false, false],
    ['refused', nodeError('EHOSTUNREACH', 'connect EHOSTUNREACH 10.0.0.9:80', 'connect'), false, false],
    ['refused', Object.assign(new Error('no network TLS'), { code: 'CSG_NO_NETWORK_TLS' }), false, false],
    ['refused', new errors.SocketError('other side closed'), false, false],
    ['connect-timeout', new errors.ConnectTimeoutError(), false, false],
    ['tls-error', checkServerIdentity('a.example', otherHostCert)!, false, false],
    [
      'tls-error',
      identityCheck({
        policy: 'ns/p',
        serverName: 'a.example',
        subjectAltNames: [{ type: 'URI', value: 'spiffe://x' }],
      } as never)('a.example', otherHostCert)!,
      false,
      false,
    ],
    ['tls-error', nodeError('DEPTH_ZERO_SELF_SIGNED_CERT', 'self-signed certificate'), false, false],
    [
      'tls-error',
      nodeError('UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'unable to verify the first certificate'),
      false,
      false,
    ],
    [
      'tls-error',
      Object.assign(nodeError('ERR_SSL_WRONG_VERSION_NUMBER', 'wrong version number'), {
        library: 'SSL routines',
        reason: 'wrong version number',
      }),
      false,
      false,
    ],
    ['reset-before-response', new errors.SocketError('other side closed'), true, false],
    ['reset-before-response', nodeError('ECONNRESET', 'read ECONNRESET', 'read'), true, false],
    ['reset-before-response', nodeError('EPIPE', 'write EPIPE', 'write'), true, false],
    ['reset-mid-body', new errors.SocketError('other side closed'), true, true],
    ['response-timeout', new errors.HeadersTimeoutError(), true, false],
    ['response-timeout', new errors.BodyTimeoutError(), true, true],
    [
      'protocol-error',
      new (errors.HTTPParserError as unknown as new (m: string, c: string) => Error)(
        'Invalid status code',
        'INVALID_STATUS',
      ),
      true,
      false,
    ],
    ['protocol-error', new errors.ResponseContentLengthMismatchError(), true, true],
    ['protocol-error', new errors.InformationalError('unexpected upgrade'), true, false],
    ['closed-locally', new errors.ClientClosedError(), false, false],
    ['closed-locally', new errors.ClientDestroyedError(), true, false],
    ['closed-locally', new errors.RequestAbortedError(), true, false],
    ['local-error', new errors.InvalidArgumentError('invalid header'), false, false],
    ['local-error', nodeError('ERR_INVALID_CHAR', 'Invalid character in header content'), false, false],
  ] as const)('%s: %s', (kind, err, connected, responded) => {
    expect(undiciFailureKind(err, connected, responded)).toBe(kind);
  });
});
