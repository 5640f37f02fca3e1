import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pinnedArgv } from './affinity.ts';
import type { LoadResult, LoadSpec } from './load.ts';
import { WRK_REQUEST_ID_HEADER } from './wrk-request-id.ts';

/**
 * wrk with one thread (it shares the load-generator core with the backend) and `--latency`. A Lua `done`
 * hook prints what the text output lacks (p99.9, exact error counts, and wrk's per-request times without its
 * coordinated-omission correction: LoadResult.perRequestLatencyMs) as one JSON line; the text is parsed as
 * well and used where the hook gave nothing.
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
  if (!spec.perRequestLatency) {
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
    lines.push(...doneHook("''"));
    return `${lines.join('\n')}\n`;
  }
  // Every request carries a number the backend echoes, so that `response` can find when it was sent: wrk
  // tells Lua nothing about which connection an answer came on.
  lines.push(...PER_REQUEST_CLOCK, 'local targets = {');
  for (const t of spec.targets) lines.push(`  {${luaString(t.host)}, ${luaString(t.path)}},`);
  lines.push(
    '}',
    'local n = #targets',
    'local i = 0',
    'local id = 0',
    'local sent = {}',
    // Log-linear buckets: exact below 1,024 us, then 512 per doubling (0.2 %), keyed by their lower bound.
    'latency_buckets = {}',
    'latency_max = 0',
    'latency_paired = 0',
    'request = function()',
    '  i = i % n + 1',
    '  id = id + 1',
    '  local t = targets[i]',
    '  wrk.headers["Host"] = t[1]',
    `  wrk.headers["${WRK_REQUEST_ID_HEADER}"] = id`,
    '  sent[id] = now_us()',
    '  return wrk.format(nil, t[2])',
    'end',
    'response = function(status, headers, body)',
    `  local key = tonumber(headers["${WRK_REQUEST_ID_HEADER}"] or headers["${WRK_REQUEST_ID_HEADER.toLowerCase()}"])`,
    '  local start = key and sent[key]',
    '  if not start then return end',
    '  sent[key] = nil',
    '  local us = math.floor(now_us() - start)',
    '  if us > latency_max then latency_max = us end',
    '  local b, w = us, 1',
    '  while b >= 1024 do b = math.floor(b / 2); w = w * 2 end',
    '  b = b * w',
    '  latency_buckets[b] = (latency_buckets[b] or 0) + 1',
    '  latency_paired = latency_paired + 1',
    'end',
    // `done` runs in wrk's main Lua state: the threads' figures are fetched from each thread.
    'local threads = {}',
    'setup = function(thread) threads[#threads + 1] = thread end',
    'local function per_request()',
    '  local counts, total, max = {}, 0, 0',
    '  for _, thread in ipairs(threads) do',
    '    for b, c in pairs(thread:get("latency_buckets")) do counts[b] = (counts[b] or 0) + c end',
    '    total = total + thread:get("latency_paired")',
    '    max = math.max(max, thread:get("latency_max"))',
    '  end',
    '  local keys = {}',
    '  for b in pairs(counts) do keys[#keys + 1] = b end',
    '  table.sort(keys)',
    // wrk's own rank rule (stats_percentile), so both figures count the same way.
    '  local function at(p)',
    '    local rank, seen = math.floor(p / 100 * total + 0.5 + 0.5), 0',
    '    for _, b in ipairs(keys) do',
    '      seen = seen + counts[b]',
    '      if seen >= rank then return b end',
    '    end',
    '    return max',
    '  end',
    '  return string.format(\',"u_requests":%d,"u_p50":%d,"u_p99":%d,"u_p999":%d,"u_max":%d\', total, at(50), at(99), at(99.9), max)',
    'end',
    ...doneHook('per_request()'),
  );
  return `${lines.join('\n')}\n`;
}

/** `extra`: a Lua expression giving more JSON members (`,"name":value...`) or ''. */
function doneHook(extra: string): string[] {
  return [
    'done = function(summary, latency, requests)',
    '  local e = summary.errors',
    '  io.write(string.format(\'WRK_RESULT {"requests":%d,"duration_us":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,"p50":%d,"p99":%d,"p999":%d,"max":%d,"mean":%f,"bytes":%d%s}\\n\',',
    '    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,',
    '    latency:percentile(50), latency:percentile(99), latency:percentile(99.9), latency.max, latency.mean,',
    `    summary.bytes, ${extra}))`,
    'end',
  ];
}

/** A microsecond monotonic clock: wrk 4.1 gives Lua none, its LuaJIT has the FFI. */
const PER_REQUEST_CLOCK: readonly string[] = [
  'local ffi = require("ffi")',
  'ffi.cdef[[',
  'typedef struct { long tv_sec; long tv_nsec; } bench_timespec;',
  'int clock_gettime(int clock, bench_timespec *ts);',
  ']]',
  'local timespec = ffi.new("bench_timespec")',
  'local function now_us()',
  '  ffi.C.clock_gettime(1, timespec)',
  '  return tonumber(timespec.tv_sec) * 1000000 + tonumber(timespec.tv_nsec) / 1000',
  'end',
];

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
  /** wrk's per-request times without its correction, in us; absent from an older script's output. */
  u_requests?: number;
  u_p50?: number;
  u_p99?: number;
  u_p999?: number;
  u_max?: number;
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
      ...(hook.u_requests
        ? {
            perRequestLatencyMs: {
              p50: (hook.u_p50 ?? Number.NaN) / 1000,
              p99: (hook.u_p99 ?? Number.NaN) / 1000,
              p999: (hook.u_p999 ?? Number.NaN) / 1000,
              max: (hook.u_max ?? Number.NaN) / 1000,
              requests: hook.u_requests,
            },
          }
        : {}),
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
