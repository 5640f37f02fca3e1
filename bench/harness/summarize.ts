import { LATENCY_RESOLUTION_MS } from './load.ts';
import { BASELINE_SUFFIX, type ResultRow, type RunSample } from './results.ts';
import type { Scenario } from './scenarios.ts';
import { maxOf, median, ratio, sum } from './stats.ts';
import { TRACED_CONFIGS } from './traced-configs.ts';

/** Medians over runs for one row. */
export function aggregate(row: ResultRow): ResultRow {
  if (row.status !== 'ok' || row.runs.length === 0) return row;
  const runs: readonly RunSample[] = row.runs;
  const rps = median(runs.map((r) => r.rps));
  const cores = median(runs.map((r) => r.proxyCpuCores));
  const rss = maxOf(runs.map((r) => r.proxyRssBytes));
  const out: ResultRow = {
    ...row,
    ...defined('rps', rps),
    ...defined(
      'mbPerSec',
      median(
        runs.map((r) =>
          r.bytesRead !== undefined && r.durationSec > 0 ? r.bytesRead / r.durationSec / 1e6 : undefined,
        ),
      ),
    ),
    ...defined('p50Ms', median(runs.map((r) => r.latencyMs.p50))),
    ...defined('p99Ms', median(runs.map((r) => r.latencyMs.p99))),
    ...defined('p999Ms', median(runs.map((r) => r.latencyMs.p999))),
    ...defined('maxMs', maxOf(runs.map((r) => r.latencyMs.max))),
    ...defined('perRequestP50Ms', row.perRequestPass?.perRequestLatencyMs?.p50),
    ...defined('perRequestP99Ms', row.perRequestPass?.perRequestLatencyMs?.p99),
    ...defined('perRequestP999Ms', row.perRequestPass?.perRequestLatencyMs?.p999),
    ...defined('perRequestMaxMs', row.perRequestPass?.perRequestLatencyMs?.max),
    errors: sum(runs.map((r) => r.errors)),
    non2xx: sum(runs.map((r) => r.non2xx)),
    ...defined('proxyCpuCores', cores),
    ...defined(
      'rpsPerProxyCore',
      rps !== undefined && cores !== undefined && cores > 0.05 ? rps / cores : undefined,
    ),
    ...defined('rssMiB', rss === undefined ? undefined : rss / (1024 * 1024)),
    ...defined('foreignCpuOnProxyCore', median(runs.map((r) => r.foreignCpuOnProxyCore))),
    ...defined('loopP99Ms', median(runs.map((r) => r.runtime?.loopP99Ms))),
    ...defined('loopMaxMs', maxOf(runs.map((r) => r.runtime?.loopMaxMs))),
    ...defined(
      'gcMsPerSec',
      median(runs.map((r) => (r.runtime ? r.runtime.gcPauseMs / r.durationSec : undefined))),
    ),
    ...defined('gcMaxPauseMs', maxOf(runs.map((r) => r.runtime?.gcMaxPauseMs))),
    ...defined(
      'allocBytesPerRequest',
      median(runs.map((r) => (r.runtime && r.requests > 0 ? r.runtime.freedBytes / r.requests : undefined))),
    ),
  };
  return out;
}

function defined<K extends string>(key: K, value: number | undefined): { [P in K]?: number } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: number };
}

/** Adds medians and ratios to every row and derives the scenario's one-line findings. */
export function derive(
  scenario: Pick<Scenario, 'name'>,
  input: readonly ResultRow[],
): { rows: ResultRow[]; findings: string[] } {
  const rows = input.map(aggregate);
  const find = (config: string, tool: string | undefined): ResultRow | undefined =>
    rows.find((r) => r.config === config && r.tool === tool && r.status === 'ok');
  const withRatios = rows.map((row) => {
    if (row.status !== 'ok') return row;
    const r = {
      ...defined('direct', ratio(row.rps, find('direct', row.tool)?.rps)),
      ...defined('nginx', ratio(row.rps, find('nginx', row.tool)?.rps)),
      ...defined('undici', ratio(row.rps, find('undici', row.tool)?.rps)),
      ...defined('splicePerCore', ratio(row.rpsPerProxyCore, find('splice', row.tool)?.rpsPerProxyCore)),
    };
    return { ...row, ratios: r };
  });
  const findings: string[] = [];
  const tools = [...new Set(rows.flatMap((r) => (r.tool ? [r.tool] : [])))];
  for (const tool of tools) {
    // Added latency is a fraction of a millisecond: only a tool with finer resolution can show it.
    if (scenario.name === 'one-connection' && LATENCY_RESOLUTION_MS[tool] < 0.1) {
      const direct = find('direct', tool);
      for (const row of withRatios) {
        if (row.tool !== tool || row.config === 'direct' || row.status !== 'ok' || !direct) continue;
        const target = row.config === 'gateway' ? ' (target: p50 under 0.3 ms, p99 under 1 ms)' : '';
        findings.push(
          `${tool}: ${row.label} adds p50 ${ms(diff(row.p50Ms, direct.p50Ms))}, p99 ${ms(diff(row.p99Ms, direct.p99Ms))} per request over direct${target}`,
        );
      }
    }
    if (scenario.name === 'small') {
      // Issue 5 targets are per proxy core: req/s divided by the CPU the proxy actually used.
      const perCore = (config: string): number | undefined => find(config, tool)?.rpsPerProxyCore;
      const gateway = perCore('gateway');
      if (gateway !== undefined) {
        findings.push(
          `${tool}: clusterset-gateway per proxy core: ${times(ratio(gateway, perCore('splice')))} the Node TCP splice (target 0.50x), ${times(ratio(gateway, perCore('undici')))} the minimal undici proxy (target 1.5x), ${times(ratio(gateway, perCore('http-proxy')))} http-proxy (target 2.5x), ${pct(ratio(gateway, perCore('nginx')))} of nginx`,
        );
      }
    }
    if (PEER_COMPARED.has(scenario.name)) {
      // gRPC and TLS: how far the gateway is from the C proxies doing the same job, per core and at the tail.
      const gateway = find('gateway', tool);
      const nginx = find('nginx', tool);
      const haproxy = find('haproxy', tool);
      if (gateway) {
        findings.push(
          `${tool}: clusterset-gateway ${count(gateway.rpsPerProxyCore)} req/s per proxy core: ${pct(ratio(gateway.rpsPerProxyCore, nginx?.rpsPerProxyCore))} of nginx, ${pct(ratio(gateway.rpsPerProxyCore, haproxy?.rpsPerProxyCore))} of haproxy; p99 ${ms(gateway.p99Ms)} (nginx ${ms(nginx?.p99Ms)}, haproxy ${ms(haproxy?.p99Ms)}); RSS ${mib(gateway.rssMiB)} (nginx ${mib(nginx?.rssMiB)}, haproxy ${mib(haproxy?.rssMiB)})${megabytes(gateway, nginx, haproxy)}`,
        );
      }
    }
    for (const before of rows.filter(
      (r) => r.tool === tool && r.status === 'ok' && r.config.endsWith(BASELINE_SUFFIX),
    )) {
      const after = find(before.config.slice(0, -BASELINE_SUFFIX.length), tool);
      if (after)
        findings.push(`${tool}: ${after.label} against ${before.label}: ${beforeAfter(before, after)}`);
    }
    // Tracing on against off, same build, same run (issue 46).
    const off = find('gateway', tool);
    for (const { id } of TRACED_CONFIGS) {
      const on = find(id, tool);
      if (on && off)
        findings.push(
          `${tool}: ${on.label} against tracing off: req/s ${count(off.rps)} -> ${count(on.rps)} (${times(ratio(on.rps, off.rps))}), ${beforeAfter(off, on)}`,
        );
    }
    if (scenario.name === 'workers') {
      const one = find('gateway', tool);
      const two = find('gateway-2-workers', tool);
      const r = ratio(two?.rps, one?.rps);
      if (r !== undefined) {
        findings.push(
          `${tool}: --workers 2 serves ${times(r)} the req/s of one process (${count(one?.rps)} -> ${count(two?.rps)}; CPU ${cores(one?.proxyCpuCores)} -> ${cores(two?.proxyCpuCores)} cores; p99 ${ms(one?.p99Ms)} -> ${ms(two?.p99Ms)})`,
        );
      }
    }
    if (scenario.name === 'routes-10k') {
      const few = find('gateway-10', tool);
      const many = find('gateway-10k', tool);
      const r = ratio(many?.rps, few?.rps);
      if (r !== undefined) {
        findings.push(
          `${tool}: 10,000 routes serve ${(r * 100).toFixed(1)}% of the req/s of 10 routes (target: within 10%)`,
        );
      }
    }
    if (scenario.name === 'config-churn') {
      const churn = find('gateway-churn', tool);
      const calm = find('gateway', tool);
      if (churn) {
        const changes = sum(churn.runs.map((r) => r.churns ?? 0));
        findings.push(
          `${tool}: ${changes} config changes under load: ${churn.errors} errors, ${churn.non2xx} non-2xx, max latency ${ms(churn.maxMs)} (no changes: ${ms(calm?.maxMs)}), req/s ${pct(ratio(churn.rps, calm?.rps))} of no changes`,
        );
      }
    }
  }
  return { rows: withRatios, findings };
}

/** MB/s where the scenario moves bulk data, per proxy core as req/s are: `; 412 MB/s per proxy core (...)`. */
function megabytes(gateway: ResultRow, nginx: ResultRow | undefined, haproxy: ResultRow | undefined): string {
  const perCore = (row: ResultRow | undefined): number | undefined =>
    row?.mbPerSec !== undefined && row.proxyCpuCores !== undefined && row.proxyCpuCores > 0.05
      ? row.mbPerSec / row.proxyCpuCores
      : undefined;
  const own = perCore(gateway);
  if (own === undefined || gateway.mbPerSec === undefined || gateway.mbPerSec < 100) return '';
  return `; ${count(gateway.mbPerSec)} MB/s, ${count(own)} MB/s per proxy core (nginx ${count(perCore(nginx))}, haproxy ${count(perCore(haproxy))})`;
}

/** The figures a change to the gateway moves, before -> after. */
function beforeAfter(before: ResultRow, after: ResultRow): string {
  const arrow = (a: string, b: string): string => `${a} -> ${b}`;
  return [
    `req/s per proxy core ${arrow(count(before.rpsPerProxyCore), count(after.rpsPerProxyCore))} (${times(ratio(after.rpsPerProxyCore, before.rpsPerProxyCore))})`,
    `p99 ${arrow(ms(before.p99Ms), ms(after.p99Ms))}`,
    `p99.9 ${arrow(ms(before.p999Ms), ms(after.p999Ms))}`,
    `RSS ${arrow(mib(before.rssMiB), mib(after.rssMiB))}`,
    `loop p99 ${arrow(ms(before.loopP99Ms), ms(after.loopP99Ms))}`,
    `GC ${arrow(ms(before.gcMsPerSec), ms(after.gcMsPerSec))} per s`,
  ].join(', ');
}

/** Scenarios whose finding compares the gateway with nginx and haproxy doing the same protocol work. */
const PEER_COMPARED: ReadonlySet<string> = new Set([
  'grpc-unary',
  'https-terminate',
  'tls-passthrough',
  'tls-passthrough-64k',
]);

function count(value: number | undefined): string {
  return value === undefined ? 'n/a' : Math.round(value).toLocaleString('en-US');
}

function cores(value: number | undefined): string {
  return value === undefined ? 'n/a' : value.toFixed(2);
}

function mib(value: number | undefined): string {
  return value === undefined ? 'n/a' : `${value.toFixed(0)} MiB`;
}

function diff(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined || b === undefined ? undefined : a - b;
}

function ms(value: number | undefined): string {
  return value === undefined || !Number.isFinite(value) ? 'n/a' : `${value.toFixed(3)} ms`;
}

function times(value: number | undefined): string {
  return value === undefined ? 'n/a' : `${value.toFixed(2)}x`;
}

function pct(value: number | undefined): string {
  return value === undefined ? 'n/a' : `${(value * 100).toFixed(1)}%`;
}
