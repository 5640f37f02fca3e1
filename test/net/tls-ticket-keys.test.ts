import { afterEach, describe, expect, it, vi } from 'vitest';
import { TlsTicketKeys, ticketKeysFor } from '../../src/net/tls-ticket-keys.ts';

const HOUR = 3_600_000;
const secret = Buffer.alloc(32, 7);

describe('TLS session ticket keys', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('are 48 bytes, the same in every process holding the secret for the same period, and differ otherwise', () => {
    const at = 10 * HOUR + 5;
    const a = new TlsTicketKeys(secret, HOUR, () => at);
    const b = new TlsTicketKeys(Buffer.from(secret), HOUR, () => at + 1000);
    expect(a.current).toHaveLength(48);
    expect(a.current.equals(b.current)).toBe(true);
    expect(a.current.equals(ticketKeysFor(secret, 10))).toBe(true);
    expect(a.current.equals(new TlsTicketKeys(Buffer.alloc(32, 8), HOUR, () => at).current)).toBe(false);
    expect(ticketKeysFor(secret, 10).equals(ticketKeysFor(secret, 11))).toBe(false);
  });

  it('change on the period boundary and tell every listener, until the last one leaves', () => {
    vi.useFakeTimers({ now: 10 * HOUR + HOUR / 2 });
    const keys = new TlsTicketKeys(secret, HOUR);
    const first = keys.current;
    const seen: Buffer[] = [];
    const stop = keys.onRotate((k) => seen.push(k));
    vi.advanceTimersByTime(HOUR / 2 - 1);
    expect(seen).toHaveLength(0);
    expect(keys.current.equals(first)).toBe(true);
    vi.advanceTimersByTime(1);
    expect(seen).toHaveLength(1);
    expect(seen[0]!.equals(ticketKeysFor(secret, 11))).toBe(true);
    expect(keys.current.equals(seen[0]!)).toBe(true);
    vi.advanceTimersByTime(HOUR);
    expect(seen.map((k) => k.equals(ticketKeysFor(secret, 12)))).toEqual([false, true]);
    stop();
    vi.advanceTimersByTime(3 * HOUR);
    expect(seen).toHaveLength(2);
    expect(vi.getTimerCount()).toBe(0);
  });
});
