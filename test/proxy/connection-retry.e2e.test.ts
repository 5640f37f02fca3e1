import { describe, expect, it } from 'vitest';
import {
  type BodyState,
  type ConnectionFault,
  decideConnectionRetry,
  faultOf,
} from '../../src/proxy/upstream/connection-retry.ts';

/** Issue 10: which requests are sent again after a connection fault, for every method/body/fault. */
const METHODS = ['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE', 'TRACE', 'POST', 'PATCH', 'CONNECT'] as const;
const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE', 'TRACE']);
const BODIES: BodyState[] = ['none', 'unsent', 'partial'];
const FAULTS: ConnectionFault[] = ['connect-failure', 'reset-before-response', 'timeout', 'other'];

function expected(method: string, body: BodyState, fault: ConnectionFault): string {
  if (body === 'partial') return 'no';
  if (fault === 'connect-failure') return 'connect-failure';
  if (fault === 'reset-before-response' && (IDEMPOTENT.has(method) || body === 'unsent')) {
    return 'reset-before-response (fresh)';
  }
  return 'no';
}

const cases = METHODS.flatMap((method) =>
  BODIES.flatMap((body) => FAULTS.map((fault) => ({ method, body, fault }))),
);

describe('connection-fault retry decisions', () => {
  it.each(cases)('$method, body $body, $fault', ({ method, body, fault }) => {
    const decision = decideConnectionRetry({
      method,
      body,
      fault,
      connectFailovers: 0,
      resetRetries: 0,
      endpointResetBefore: false,
    });
    const shown = decision.retry ? `${decision.reason}${decision.freshConnection ? ' (fresh)' : ''}` : 'no';
    expect(shown).toBe(expected(method, body, fault));
  });

  it('a reset before the response is retried once per endpoint that reset it, three times in all; connect failures up to 4 times', () => {
    const base = { method: 'GET', body: 'none' as const, fault: 'reset-before-response' as const };
    const reset = (resetRetries: number, endpointResetBefore: boolean) =>
      decideConnectionRetry({ ...base, connectFailovers: 0, resetRetries, endpointResetBefore }).retry;
    // The second endpoint of a tier resets it too: still sent again (to the next one).
    expect(reset(1, false)).toBe(true);
    expect(reset(2, false)).toBe(true);
    // The same endpoint again (no other one to go to), or a fourth reset: the client gets the error.
    expect(reset(1, true)).toBe(false);
    expect(reset(3, false)).toBe(false);
    const connect = (connectFailovers: number) =>
      decideConnectionRetry({
        ...base,
        fault: 'connect-failure',
        connectFailovers,
        resetRetries: 1,
        endpointResetBefore: true,
      }).retry;
    expect(connect(3)).toBe(true);
    expect(connect(4)).toBe(false);
  });

  it('the fault of each failure kind', () => {
    expect(faultOf('refused', false, false)).toBe('connect-failure');
    expect(faultOf('connect-timeout', false, false)).toBe('connect-failure');
    expect(faultOf('tls-error', false, false)).toBe('connect-failure');
    expect(faultOf('reset-before-response', true, false)).toBe('reset-before-response');
    expect(faultOf('reset-before-response', true, true)).toBe('other');
    expect(faultOf('stream-reset', true, false)).toBe('other');
    expect(faultOf('protocol-error', true, false)).toBe('other');
    expect(faultOf('closed-locally', false, false)).toBe('connect-failure');
    expect(faultOf('closed-locally', true, false)).toBe('other');
    expect(faultOf('local-error', false, false)).toBe('other');
    expect(faultOf('response-timeout', true, false)).toBe('timeout');
  });
});
