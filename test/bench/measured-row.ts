import type { ResultRow, RunSample } from '../../bench/harness/results.ts';

/**
 * A result row of one measured run for the findings tests: a 1 s wrk run with latencies 1/2/3/4 ms and no
 * errors, except for what the test gives.
 */
export function measuredRow(
  scenario: string,
  config: string,
  run: Partial<RunSample> & Pick<RunSample, 'rps'>,
  label = config,
): ResultRow {
  const tool = run.tool ?? 'wrk';
  return {
    scenario,
    config,
    label,
    status: 'ok',
    tool,
    runs: [
      {
        tool,
        requests: run.rps,
        durationSec: 1,
        latencyMs: { p50: 1, p99: 2, p999: 3, max: 4, mean: 1 },
        errors: 0,
        non2xx: 0,
        ...run,
      },
    ],
  };
}
