import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { hasCommand } from '../../bench/harness/affinity.ts';
import { type RunningBackend, startBackend } from '../../bench/harness/backend.ts';
import { sourcePrograms } from '../../bench/harness/compiled.ts';
import { freePort } from '../../bench/harness/ports.ts';
import { runWrk } from '../../bench/harness/wrk-load.ts';

const projectDir = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const tools = hasCommand('wrk') && hasCommand('nginx');

// wrk runs the generated Lua script for real against the nginx backend, which echoes the request id: a script
// wrk cannot load, or answers it cannot pair with their request, leave no per-request figures.
describe.skipIf(!tools)("wrk's per-request latency (wrk + the nginx backend, 1 s)", () => {
  let backend: RunningBackend | undefined;
  afterAll(async () => {
    await backend?.stop();
  });

  it('pairs every answer with its request, one target or several', async () => {
    const port = await freePort();
    backend = await startBackend({
      cpus: '',
      endpoints: [{ address: '127.0.0.1', port }],
      projectDir,
      programs: sourcePrograms(projectDir),
    });
    expect(backend.kind).toBe('nginx');
    const one = { host: 'a.test', path: '/' };
    for (const targets of [[one], [one, { host: 'b.test', path: '/other' }]]) {
      const result = await runWrk({
        origin: `http://127.0.0.1:${port}`,
        method: 'GET',
        targets,
        connections: 4,
        durationSec: 1,
        perRequestLatency: true,
      });
      expect(result.errors).toBe(0);
      expect(result.requests).toBeGreaterThan(0);
      const perRequest = result.perRequestLatencyMs;
      // wrk calls `response` where it counts an answer: every answer counted was paired.
      expect(perRequest?.requests).toBe(result.requests);
      expect(perRequest?.p50).toBeGreaterThan(0);
      expect(perRequest?.p50).toBeLessThanOrEqual(perRequest?.p99 ?? 0);
      expect(perRequest?.p99).toBeLessThanOrEqual(perRequest?.p999 ?? 0);
      expect(perRequest?.p999).toBeLessThanOrEqual(perRequest?.max ?? 0);
    }
  });
});
