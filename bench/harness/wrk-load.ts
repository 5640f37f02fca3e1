import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pinnedArgv } from './affinity.ts';
import type { LoadResult, LoadSpec } from './load.ts';

/**
 * wrk with one thread (it shares the load-generator core with the backend) and `--latency`. A Lua `done`
 * hook prints what the text output lacks (p99.9, exact error counts) as one JSON line; the text is parsed
 * as well and used where the hook gave nothing.
 */
export async function runWrk(spec: LoadSpec): Promise<LoadResult> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-wrk-'));
  try {
    const script = join(dir, 'bench.lua');
    await writeFile(script, wrkScript(spec));
    const args = [
      '-t1',
      `-c${spec.connections}`,
      `-d${spec.durationSec}s`,
      '--timeout',
      '10s',
      '--latency',
      '-s',
      script,
      wrkUrl(spec),
    ];
    const stdout = await new Promise<string>((resolve, reject) => {
      const [command, argv] = pinnedArgv(spec.cpus ?? '', 'wrk', args);
      execFile(command, argv, { maxBuffer: 16 * 1024 * 1024 }, (error, out, err) => {
        if (error) reject(new Error(`wrk failed: ${error.message} ${err}`));
        else resolve(out);
      });
    });
    return parseWrkOutput(stdout);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * wrk sends the URL's host as SNI and has no flag for it: an `https` origin is dialled by `serverName`,
 * which must resolve to the origin's address (the bench uses `localhost`).
 */
export function wrkUrl(spec: Pick<LoadSpec, 'origin' | 'serverName'>): string {
  if (!spec.serverName || !spec.origin.startsWith('https:')) return spec.origin;
  const url = new URL(spec.origin);
  url.hostname = spec.serverName;
  return url.origin;
}

export function wrkScript(spec: LoadSpec): string {
  const lines: string[] = [`wrk.method = ${luaString(spec.method)}`];
  if (spec.bodyBytes) {
    lines.push(`wrk.body = string.rep("a", ${spec.bodyBytes})`);
    lines.push(`wrk.headers["Content-Type"] = "application/octet-stream"`);
  }
  const [first] = spec.targets;
  if (spec.targets.length === 1 && first) {
    // A static request: wrk builds it once, the cheapest way to load.
    lines.push(`wrk.path = ${luaString(first.path)}`, `wrk.headers["Host"] = ${luaString(first.host)}`);
  } else {
    lines.push('local targets = {');
    for (const t of spec.targets) lines.push(`  {${luaString(t.host)}, ${luaString(t.path)}},`);
    lines.push(
      '}',
      'local n = #targets',
      'local i = 0',
      'request = function()',
      '  i = i % n + 1',
      '  local t = targets[i]',
      '  wrk.headers["Host"] = t[1]',
      '  return wrk.format(nil, t[2])',
      'end',
    );
  }
  lines.push(
    'done = function(summary, latency, requests)',
    '  local e = summary.errors',
    '  io.write(string.format(\'WRK_RESULT {"requests":%d,"duration_us":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,"p50":%d,"p99":%d,"p999":%d,"max":%d,"mean":%f,"bytes":%d}\\n\',',
    '    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,',
    '    latency:percentile(50), latency:percentile(99), latency:percentile(99.9), latency.max, latency.mean,',
    '    summary.bytes))',
    'end',
  );
  return `${lines.join('\n')}\n`;
}

function luaString(text: string): string {
  return JSON.stringify(text);
}

interface WrkHook {
  requests: number;
  duration_us: number;
  connect: number;
  read: number;
  write: number;
  status: number;
  timeout: number;
  p50: number;
  p99: number;
  p999: number;
  max: number;
  mean: number;
  /** Absent from the output of an older script. */
  bytes?: number;
}

/** Parses wrk's stdout: the WRK_RESULT line when present, the `--latency` text otherwise. */
export function parseWrkOutput(stdout: string): LoadResult {
  const hookLine = /^WRK_RESULT (\{.*\})$/m.exec(stdout)?.[1];
  const text = parseWrkText(stdout);
  if (hookLine) {
    const hook = JSON.parse(hookLine) as WrkHook;
    const durationSec = hook.duration_us / 1e6;
    return {
      tool: 'wrk',
      requests: hook.requests,
      durationSec,
      rps: durationSec > 0 ? hook.requests / durationSec : 0,
      latencyMs: {
        p50: hook.p50 / 1000,
        p99: hook.p99 / 1000,
        p999: hook.p999 / 1000,
        max: hook.max / 1000,
        mean: hook.mean / 1000,
      },
      errors: hook.connect + hook.read + hook.write + hook.timeout,
      non2xx: hook.status,
      ...(hook.bytes !== undefined ? { bytesRead: hook.bytes } : {}),
    };
  }
  return text;
}

/** wrk prints sizes in powers of 1024 with these suffixes. */
const WRK_BYTE_UNITS = ['B', 'KB', 'MB', 'GB', 'TB'];

const UNIT_MS: Readonly<Record<string, number>> = { us: 0.001, ms: 1, s: 1000, m: 60_000 };

function durationMs(value: string | undefined): number {
  const match = /^([\d.]+)(us|ms|s|m)$/.exec(value ?? '');
  if (!match) return Number.NaN;
  return Number(match[1]) * (UNIT_MS[match[2] ?? 'ms'] ?? 1);
}

export function parseWrkText(stdout: string): LoadResult {
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)?.[1] ?? Number.NaN);
  const total = /(\d+) requests in ([\d.]+)(us|ms|s|m)/.exec(stdout);
  const requests = Number(total?.[1] ?? 0);
  const durationSec = durationMs(total ? `${total[2]}${total[3]}` : undefined) / 1000;
  const percentile = (p: string): number =>
    durationMs(new RegExp(`^\\s+${p}%\\s+(\\S+)`, 'm').exec(stdout)?.[1]);
  const latencyLine = /^\s+Latency\s+(\S+)\s+(\S+)\s+(\S+)/m.exec(stdout);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(stdout);
  const errors = socket ? socket.slice(1, 5).reduce((a, b) => a + Number(b), 0) : 0;
  const read = /requests in \S+, ([\d.]+)(B|KB|MB|GB|TB) read/.exec(stdout);
  return {
    tool: 'wrk',
    requests,
    durationSec,
    rps,
    latencyMs: {
      p50: percentile('50'),
      p99: percentile('99'),
      p999: Number.NaN,
      max: durationMs(latencyLine?.[3]),
      mean: durationMs(latencyLine?.[1]),
    },
    errors,
    non2xx: Number(/Non-2xx or 3xx responses: (\d+)/.exec(stdout)?.[1] ?? 0),
    ...(read ? { bytesRead: Number(read[1]) * 1024 ** WRK_BYTE_UNITS.indexOf(read[2] ?? 'B') } : {}),
  };
}
