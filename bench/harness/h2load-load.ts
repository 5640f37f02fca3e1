import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHistogram } from 'node:perf_hooks';
import { pinnedArgv } from './affinity.ts';
import type { LoadResult, LoadSpec } from './load.ts';
import { wrkUrl } from './wrk-load.ts';

/**
 * h2load (nghttp2's HTTP/2 load generator, Debian `nghttp2-client`): `connections` clients, each keeping
 * `streamsPerConnection` requests in flight on one HTTP/2 connection, one thread. It negotiates `h2` by ALPN on
 * an `https` origin (dialled by `serverName`, as wrk is) and prints no percentiles, so it writes one line per
 * request to a log file (`--log-file`: start, status, microseconds) and the percentiles come from there.
 */
export async function runH2load(spec: LoadSpec): Promise<LoadResult> {
  const [target] = spec.targets;
  if (!target) throw new Error('h2load: no target');
  const dir = await mkdtemp(join(tmpdir(), 'bench-h2load-'));
  try {
    const logFile = join(dir, 'requests.tsv');
    const url = `${wrkUrl(spec)}${target.path}`;
    const args = [
      '-t1',
      `-c${spec.connections}`,
      `-m${spec.streamsPerConnection ?? 1}`,
      `-D${spec.durationSec}`,
      '--log-file',
      logFile,
      ...(spec.method === 'POST' ? ['-d', '/dev/null'] : []),
      url,
    ];
    const stdout = await new Promise<string>((resolve, reject) => {
      const [command, argv] = pinnedArgv(spec.cpus ?? '', 'h2load', args);
      execFile(command, argv, { maxBuffer: 16 * 1024 * 1024 }, (error, out, err) => {
        if (error) reject(new Error(`h2load failed: ${error.message} ${err}`));
        else resolve(out);
      });
    });
    return parseH2loadOutput(stdout, await readFile(logFile, 'utf8'));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** h2load's summary (counts, duration, bytes) and its per-request log (status and latency of each request). */
export function parseH2loadOutput(stdout: string, log: string): LoadResult {
  const finished = /finished in ([\d.]+)(us|ms|s)/.exec(stdout);
  const unit = { us: 1e-6, ms: 1e-3, s: 1 }[finished?.[2] as 'us' | 'ms' | 's'] ?? 1;
  const durationSec = Number(finished?.[1] ?? 0) * unit;
  const counts =
    /requests: (\d+) total, \d+ started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored, (\d+) timeout/.exec(
      stdout,
    );
  const status = /status codes: (\d+) 2xx/.exec(stdout);
  const traffic = /traffic: [\d.]+\w* \((\d+)\) total/.exec(stdout);
  const histogram = createHistogram();
  let answered = 0;
  for (const line of log.split('\n')) {
    const [, code, micros] = line.split('\t');
    if (code === undefined || micros === undefined) continue;
    answered++;
    histogram.record(Math.max(1, Number(micros)));
  }
  const done = Number(counts?.[2] ?? answered);
  // h2load counts a refused or failed connection nowhere under -D: no answer at all is the failure it reports.
  if (done === 0)
    throw new Error(`h2load: no request answered (${/requests: .*/.exec(stdout)?.[0] ?? 'no summary'})`);
  const ok = Number(status?.[1] ?? 0);
  const ms = (us: number): number => us / 1000;
  return {
    tool: 'h2load',
    requests: ok,
    durationSec,
    rps: durationSec > 0 ? ok / durationSec : 0,
    latencyMs: {
      p50: answered > 0 ? ms(histogram.percentile(50)) : Number.NaN,
      p99: answered > 0 ? ms(histogram.percentile(99)) : Number.NaN,
      p999: answered > 0 ? ms(histogram.percentile(99.9)) : Number.NaN,
      max: answered > 0 ? ms(histogram.max) : Number.NaN,
      mean: answered > 0 ? ms(histogram.mean) : Number.NaN,
    },
    errors: Number(counts?.[5] ?? 0) + Number(counts?.[6] ?? 0),
    non2xx: Math.max(0, done - ok - Number(counts?.[5] ?? 0) - Number(counts?.[6] ?? 0)),
    ...(traffic ? { bytesRead: Number(traffic[1]) } : {}),
  };
}
