import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import type { ChildLoadResult } from './churn-support.ts';

/** What paced-load-child.mjs reports beyond autocannon's fields: its own share of the latency. */
export interface PacedLoadResult extends ChildLoadResult {
  /** From the write of the request to its whole answer (the due-time figures also count waiting for a connection). */
  readonly onSocket: { readonly p50Ms: number; readonly p99Ms: number; readonly maxMs: number };
  /** How late the generator's own timer sent, and its event-loop delay: latency it adds, not the gateway. */
  readonly generator: {
    readonly timerLateP99Ms: number;
    readonly timerLateMaxMs: number;
    readonly loopDelayP99Ms: number;
    readonly loopDelayMaxMs: number;
  };
}

/**
 * An open-loop load at an even pace in a child process: request k is due at k / rate and its latency counts from
 * then. autocannon's -R is not that: each connection sends its share of the second back to back when the second
 * begins (a burst of the whole rate at saturation every second), and it backfills every answer slower than
 * 1 / (rate per connection) rounded up to 1 ms as if requests had been due every 1 ms behind it.
 */
export async function pacedLoadFromChild(options: {
  readonly port: number;
  readonly seconds: number;
  readonly connections: number;
  readonly rate: number;
  readonly host: string;
  readonly path: string;
}): Promise<PacedLoadResult> {
  const child = spawn(
    process.execPath,
    [join(import.meta.dirname, 'paced-load-child.mjs'), JSON.stringify(options)],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let out = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  const [code] = (await once(child, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`paced load exited with ${code}`);
  return JSON.parse(out) as PacedLoadResult;
}
