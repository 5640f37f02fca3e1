import { describe, expect, it } from 'vitest';
import {
  AttemptTimeoutError,
  classifyAttemptError,
  failureStatus,
  isClosedLocally,
} from '../../src/proxy/upstream/attempt-failure.ts';

const coded = (code: string): Error & { code: string } => Object.assign(new Error(code), { code });

describe('what a failed attempt was', () => {
  it.each([
    ['our own timeout', new AttemptTimeoutError('t'), true, 'timeout'],
    ['undici headers timeout', coded('UND_ERR_HEADERS_TIMEOUT'), true, 'timeout'],
    ['undici body timeout', coded('UND_ERR_BODY_TIMEOUT'), true, 'timeout'],
    ['connect timeout', coded('UND_ERR_CONNECT_TIMEOUT'), false, 'connect-failure'],
    ['a request undici refuses to build', coded('UND_ERR_INVALID_ARG'), false, 'success'],
    ['an invalid header character', coded('ERR_INVALID_CHAR'), true, 'success'],
    ['a reset after connecting', coded('ECONNRESET'), true, 'reset'],
    ['a refused connection', coded('ECONNREFUSED'), false, 'connect-failure'],
  ] as const)('%s', (_what, err, connected, result) => {
    expect(classifyAttemptError(err, connected)).toBe(result);
  });

  it('maps what nothing retries to 504 for timeouts and 502 for the rest', () => {
    expect(failureStatus('timeout')).toBe(504);
    expect(failureStatus('reset')).toBe(502);
    expect(failureStatus('connect-failure')).toBe(502);
  });

  it('a pool closed under a request that never connected is not the endpoint', () => {
    expect(isClosedLocally('UND_ERR_CLOSED', false)).toBe(true);
    expect(isClosedLocally('UND_ERR_DESTROYED', false)).toBe(true);
    expect(isClosedLocally('UND_ERR_CLOSED', true)).toBe(false);
    expect(isClosedLocally('ECONNRESET', false)).toBe(false);
  });
});
