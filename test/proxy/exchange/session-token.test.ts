import { describe, expect, it } from 'vitest';
import {
  backendHash,
  MAX_SESSION_VALUE,
  parseSessionKeyFile,
  type SessionPin,
  SessionTokens,
} from '../../../src/proxy/exchange/session-token.ts';

const KEY_A = Buffer.from(`${'a'.repeat(32)}-first-key-of-this-test`);
const KEY_B = Buffer.from(`${'b'.repeat(32)}-second-key-of-this-test`);
const BACKEND = backendHash('ServiceImport/shop/cart:8080');
const T0 = Date.UTC(2026, 0, 1);

function clock(start = T0) {
  const state = { now: start };
  return { state, now: () => state.now };
}

describe('session tokens', () => {
  it('round-trips cluster, endpoint and issue time, and reveals neither in the value', () => {
    const c = clock();
    const tokens = new SessionTokens([KEY_A], c.now);
    const value = tokens.seal(BACKEND, 'eu-west-1', '10.1.2.3:8080')!;
    expect(value).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(value).not.toContain('eu-west');
    expect(Buffer.from(value, 'base64url').toString('latin1')).not.toContain('10.1.2.3');
    const pin = tokens.open(value, BACKEND, undefined) as SessionPin;
    expect(pin).toEqual({
      backend: BACKEND,
      cluster: 'eu-west-1',
      endpoint: '10.1.2.3:8080',
      issuedAtS: T0 / 1000,
    });
    // Two seals of the same pin differ (random IV): a value tells nothing about another client's.
    expect(tokens.seal(BACKEND, 'eu-west-1', '10.1.2.3:8080')).not.toBe(value);
  });

  it('is honoured by another instance holding the same key (replicas, restarts)', () => {
    const value = new SessionTokens([KEY_A], clock().now).seal(BACKEND, 'c1', '[fd00::1]:80')!;
    const other = new SessionTokens([KEY_A], clock().now);
    expect((other.open(value, BACKEND, undefined) as SessionPin).endpoint).toBe('[fd00::1]:80');
  });

  it('ignores a value sealed with another key as forged', () => {
    const value = new SessionTokens([KEY_B], clock().now).seal(BACKEND, 'c1', '10.0.0.1:80')!;
    expect(new SessionTokens([KEY_A], clock().now).open(value, BACKEND, undefined)).toBe('forged');
  });

  it('opens with a rotated-out key and seals with the first', () => {
    const old = new SessionTokens([KEY_B], clock().now).seal(BACKEND, 'c1', '10.0.0.1:80')!;
    const rotating = new SessionTokens([KEY_A, KEY_B], clock().now);
    expect((rotating.open(old, BACKEND, undefined) as SessionPin).cluster).toBe('c1');
    const fresh = rotating.seal(BACKEND, 'c2', '10.0.0.2:80')!;
    expect(new SessionTokens([KEY_B], clock().now).open(fresh, BACKEND, undefined)).toBe('forged');
    expect(
      (new SessionTokens([KEY_A], clock().now).open(fresh, BACKEND, undefined) as SessionPin).cluster,
    ).toBe('c2');
  });

  it('ignores any changed byte as forged', () => {
    const tokens = new SessionTokens([KEY_A], clock().now);
    const bytes = Buffer.from(tokens.seal(BACKEND, 'c1', '10.0.0.1:80')!, 'base64url');
    for (let i = 1; i < bytes.length; i++) {
      const forged = Buffer.from(bytes);
      forged[i]! ^= 0x01;
      expect(tokens.open(forged.toString('base64url'), BACKEND, undefined)).toBe('forged');
    }
  });

  it('ignores truncated, empty, non-base64url and oversized values', () => {
    const tokens = new SessionTokens([KEY_A], clock().now);
    const value = tokens.seal(BACKEND, 'c1', '10.0.0.1:80')!;
    expect(tokens.open(value.slice(0, 10), BACKEND, undefined)).toBe('malformed');
    expect(tokens.open(value.slice(0, -3), BACKEND, undefined)).toBe('forged');
    expect(tokens.open('', BACKEND, undefined)).toBe('malformed');
    expect(tokens.open(`${value.slice(0, 40)}%${value.slice(41)}`, BACKEND, undefined)).toBe('malformed');
    expect(tokens.open('A'.repeat(MAX_SESSION_VALUE + 1), BACKEND, undefined)).toBe('oversized');
    expect(tokens.open(`${value}${'A'.repeat(MAX_SESSION_VALUE)}`, BACKEND, undefined)).toBe('oversized');
  });

  it('ignores a value past the absolute timeout, and honours it just before', () => {
    const c = clock();
    const tokens = new SessionTokens([KEY_A], c.now);
    const value = tokens.seal(BACKEND, 'c1', '10.0.0.1:80')!;
    c.state.now = T0 + 59_999;
    expect(typeof tokens.open(value, BACKEND, 60_000)).toBe('object');
    c.state.now = T0 + 60_000;
    expect(tokens.open(value, BACKEND, 60_000)).toBe('expired');
    // Without an absolute timeout the value does not age.
    c.state.now = T0 + 365 * 86_400_000;
    expect(typeof tokens.open(value, BACKEND, undefined)).toBe('object');
  });

  it('ignores a value issued for another backend', () => {
    const tokens = new SessionTokens([KEY_A], clock().now);
    const value = tokens.seal(backendHash('Service/shop/other:80'), 'c1', '10.0.0.1:80')!;
    expect(tokens.open(value, BACKEND, undefined)).toBe('other-backend');
  });

  it('keeps the longest names under the cap', () => {
    const tokens = new SessionTokens([KEY_A], clock().now);
    const value = tokens.seal(BACKEND, 'c'.repeat(253), '[fd00:1234:5678:9abc:def0:1234:5678:9abc]:65535')!;
    expect(value.length).toBeLessThanOrEqual(MAX_SESSION_VALUE);
    expect((tokens.open(value, BACKEND, undefined) as SessionPin).cluster).toHaveLength(253);
  });
});

describe('--session-key-file', () => {
  it('reads one key per line, skipping blanks and comments', () => {
    const keys = parseSessionKeyFile(`# current\n${'x'.repeat(44)}\n\n${'y'.repeat(32)}\n`, 'k');
    expect(keys.map((k) => k.length)).toEqual([44, 32]);
  });

  it('refuses an empty file and a short key without printing it', () => {
    expect(() => parseSessionKeyFile('# nothing\n', 'k')).toThrow(/no key/);
    expect(() => parseSessionKeyFile('short-secret\n', 'k')).toThrow(/shorter than 32/);
    expect(() => parseSessionKeyFile('short-secret\n', 'k')).not.toThrow(/short-secret/);
  });
});
