import { describe, expect, it } from 'vitest';
import {
  type AttemptOutcome,
  balancerResult,
  FAILURES,
  type FailureKind,
  failureOf,
  outcomeOf,
  UpstreamFailure,
} from '../../../src/proxy/upstream/attempt-outcome.ts';
import { decideConnectionRetry, faultOf } from '../../../src/proxy/upstream/connection-retry.ts';

/** For every kind: what the balancer sees, whether a GET without a body is sent again, the client's status. */
const EXPECTED: Record<FailureKind, readonly [string, string, number]> = {
  refused: ['connect-failure', 'connect-failure', 502],
  'connect-timeout': ['connect-failure', 'connect-failure', 502],
  'tls-error': ['connect-failure', 'connect-failure', 502],
  'reset-before-response': ['reset', 'reset-before-response', 502],
  'stream-reset': ['reset', 'no', 502],
  'reset-mid-body': ['reset', 'no', 502],
  'protocol-error': ['reset', 'no', 502],
  'response-timeout': ['timeout', 'no', 504],
  'closed-locally': ['success', 'connect-failure', 502],
  'local-error': ['success', 'no', 500],
  'client-gone': ['success', 'no', 499],
};

describe('the failure taxonomy', () => {
  it.each(Object.entries(EXPECTED))('%s', (kind, [balancer, retried, status]) => {
    const failure = kind as FailureKind;
    expect(balancerResult(failure, 0)).toBe(balancer);
    expect(FAILURES[failure].status).toBe(status);
    // A GET without a body that failed before any response byte, on a connection that was never reused.
    const connected = !['refused', 'connect-timeout', 'tls-error', 'closed-locally'].includes(failure);
    const decision = decideConnectionRetry({
      method: 'GET',
      body: 'none',
      fault: faultOf(failure, connected, failure === 'reset-mid-body'),
      connectFailovers: 0,
      resetRetries: 0,
      endpointResetBefore: false,
    });
    expect(decision.retry ? decision.reason : 'no').toBe(retried);
  });

  it('a response is judged by its status', () => {
    expect(balancerResult(undefined, 200)).toBe('success');
    expect(balancerResult(undefined, 404)).toBe('success');
    expect(balancerResult(undefined, 503)).toBe('http5xx');
    expect(outcomeOf(undefined, 503)).toEqual<AttemptOutcome>({ kind: 'response', status: 503 });
    expect(outcomeOf('refused', 0)).toEqual<AttemptOutcome>({ kind: 'refused' });
  });

  it('nothing after the response began is sent again, nor a pool closed under a connected request', () => {
    expect(faultOf('reset-before-response', true, true)).toBe('other');
    expect(faultOf('refused', false, true)).toBe('other');
    expect(faultOf('closed-locally', true, false)).toBe('other');
    expect(faultOf('response-timeout', true, false)).toBe('timeout');
  });

  it('keeps the code of the error behind a failure, and calls an unclassified error the gateway’s own', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), {
      errno: -111,
      code: 'ECONNREFUSED',
      syscall: 'connect',
    });
    const failure = new UpstreamFailure('refused', 'connection failed', refused);
    expect(failure).toMatchObject({ kind: 'refused', code: 'ECONNREFUSED', cause: refused });
    expect(failureOf(failure)).toBe(failure);
    const stray = failureOf(new TypeError('not a function'));
    expect(stray.kind).toBe('local-error');
    expect(FAILURES[stray.kind].balancer).toBe('success');
  });
});
