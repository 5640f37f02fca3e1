import { describe, expect, it, vi } from 'vitest';
import {
  BalancerConfigError,
  createBalancerFactory,
  monotonicClock,
  resolveBalancerOptions,
} from '../../src/lb/index.ts';

describe('balancer options', () => {
  it('has the documented defaults', () => {
    const options = resolveBalancerOptions();
    expect(options).toMatchObject({
      policy: 'p2c-peak-ewma',
      overprovisioningFactor: 1.4,
      panicThresholdPercent: 50,
      outlier: {
        consecutive5xx: 5,
        consecutiveConnectFailures: 3,
        baseEjectionTimeMs: 30_000,
        maxEjectionTimeMs: 300_000,
        maxEjectionPercent: 10,
        ejectionDecayIntervalMs: 10_000,
      },
      peakEwma: { decayTimeMs: 10_000, defaultRttMs: 30, failurePenaltyMs: 1_000 },
    });
    expect(options.observer).toBeUndefined();
  });

  it('merges partial nested groups with the defaults', () => {
    const options = resolveBalancerOptions({ outlier: { maxEjectionPercent: 10 } });
    expect(options.outlier.maxEjectionPercent).toBe(10);
    expect(options.outlier.consecutive5xx).toBe(5);
  });

  it.each([
    [{ overprovisioningFactor: 0 }, 'overprovisioningFactor'],
    [{ panicThresholdPercent: 101 }, 'panicThresholdPercent'],
    [{ outlier: { maxEjectionPercent: -1 } }, 'outlier.maxEjectionPercent'],
    [{ outlier: { consecutive5xx: 0 } }, 'outlier.consecutive5xx'],
    [{ peakEwma: { decayTimeMs: Number.NaN } }, 'peakEwma.decayTimeMs'],
    [{ policy: 'random' as 'p2c-peak-ewma' }, 'policy'],
  ])('rejects %o naming the field', (input, field) => {
    expect(() => createBalancerFactory(input)).toThrow(BalancerConfigError);
    expect(() => createBalancerFactory(input)).toThrow(field);
    try {
      createBalancerFactory(input);
    } catch (error) {
      expect((error as BalancerConfigError).code).toBe('ERR_LB_CONFIG');
    }
  });
});

describe('the default clock', () => {
  it('is monotonic: a wall-clock step back (NTP) does not move it', () => {
    const clock = resolveBalancerOptions().clock;
    expect(clock).toBe(monotonicClock);
    const before = clock.now();
    const wall = vi.spyOn(Date, 'now').mockReturnValue(before - 3_600_000);
    try {
      expect(clock.now()).toBeGreaterThanOrEqual(before);
    } finally {
      wall.mockRestore();
    }
    // Still reads as about the wall-clock time (for `since` and `ejectedUntilMs` in /config_dump).
    expect(Math.abs(clock.now() - Date.now())).toBeLessThan(60_000);
  });
});
