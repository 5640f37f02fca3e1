import { describe, expect, it } from 'vitest';
import { parseCli } from '../../src/cli/args.ts';
import { UsageError } from '../../src/cli/flag-values.ts';

describe('health check flags (issue 10)', () => {
  it('defaults: on, 2 s ± 10%, 1 s timeout, 2 failures / 1 success, 250 probes/s, 5 s minimum ejection', () => {
    expect(parseCli([], {}).healthCheck).toEqual({
      enabled: true,
      intervalMs: 2000,
      timeoutMs: 1000,
      jitterPercent: 10,
      maxProbesPerSecond: 250,
      unhealthyThreshold: 2,
      healthyThreshold: 1,
      minEjectionMs: 5000,
      avoidanceMs: 5000,
    });
  });

  it('every setting has a flag', () => {
    const cli = parseCli(
      [
        '--no-health-checks',
        '--health-check-interval-ms=500',
        '--health-check-timeout-ms=200',
        '--health-check-jitter=0',
        '--health-check-max-rate=0',
        '--health-check-unhealthy-threshold=3',
        '--health-check-healthy-threshold=2',
        '--min-ejection-ms=1000',
        '--avoidance-ms=0',
      ],
      {},
    );
    expect(cli.healthCheck).toEqual({
      enabled: false,
      intervalMs: 500,
      timeoutMs: 200,
      jitterPercent: 0,
      maxProbesPerSecond: 0,
      unhealthyThreshold: 3,
      healthyThreshold: 2,
      minEjectionMs: 1000,
      avoidanceMs: 0,
    });
  });

  it.each([
    ['--health-check-interval-ms=-1'],
    ['--health-check-timeout-ms=abc'],
    ['--health-check-unhealthy-threshold=0'],
    ['--health-check-jitter=101'],
  ])('%s is a usage error', (flag) => {
    expect(() => parseCli([flag], {})).toThrow(UsageError);
  });
});
