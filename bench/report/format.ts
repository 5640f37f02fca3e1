import type { ResultRow, ScenarioResult } from '../harness/results.ts';

export function formatInt(value: number | undefined): string {
  return value === undefined || !Number.isFinite(value) ? '-' : Math.round(value).toLocaleString('en-US');
}

export function formatMs(value: number | undefined): string {
  if (value === undefined || !Number.isFinite(value)) return '-';
  return value < 10 ? value.toFixed(2) : value.toFixed(1);
}

export function formatRatio(value: number | undefined): string {
  return value === undefined || !Number.isFinite(value) ? '-' : `${value.toFixed(2)}x`;
}

export function formatMiB(value: number | undefined): string {
  return value === undefined ? '-' : value.toFixed(0);
}

export function formatCores(value: number | undefined): string {
  return value === undefined ? '-' : `${Math.round(value * 100)}%`;
}

export const COLUMNS = [
  'config',
  'tool',
  'req/s',
  'MB/s',
  'p50 ms',
  'p99 ms',
  'p99.9 ms',
  'p99 ms per request (wrk, uncorrected)',
  'req/s per proxy core',
  'proxy CPU',
  'others on proxy CPU',
  'RSS MiB',
  'loop p99 ms',
  'GC ms/s',
  'max GC ms',
  'KiB alloc/req',
  'errors',
  'non-2xx',
  'vs direct',
  'vs nginx',
  'vs undici',
  'per core vs TCP splice',
] as const;

/** One row's cells in COLUMNS order; skipped rows carry their reason in the tool cell. */
export function rowCells(row: ResultRow): string[] {
  if (row.status === 'skipped')
    return [row.label, `skipped: ${row.reason ?? ''}`, ...COLUMNS.slice(2).map(() => '')];
  return [
    row.label,
    row.tool ?? '-',
    formatInt(row.rps),
    formatMs(row.mbPerSec),
    formatMs(row.p50Ms),
    formatMs(row.p99Ms),
    formatMs(row.p999Ms),
    formatMs(row.perRequestP99Ms),
    formatInt(row.rpsPerProxyCore),
    formatCores(row.proxyCpuCores),
    formatCores(row.foreignCpuOnProxyCore),
    formatMiB(row.rssMiB),
    formatMs(row.loopP99Ms),
    formatMs(row.gcMsPerSec),
    formatMs(row.gcMaxPauseMs),
    row.allocBytesPerRequest === undefined ? '-' : (row.allocBytesPerRequest / 1024).toFixed(1),
    formatInt(row.errors),
    formatInt(row.non2xx),
    formatRatio(row.ratios?.direct),
    formatRatio(row.ratios?.nginx),
    formatRatio(row.ratios?.undici),
    formatRatio(row.ratios?.splicePerCore),
  ];
}

/** The row a chart shows per config: wrk when it ran (it loads harder), else autocannon. */
export function preferredRows(scenario: ScenarioResult): ResultRow[] {
  const byConfig = new Map<string, ResultRow>();
  for (const row of scenario.rows) {
    const current = byConfig.get(row.config);
    if (
      !current ||
      (current.status !== 'ok' && row.status === 'ok') ||
      (row.tool === 'wrk' && row.status === 'ok')
    ) {
      byConfig.set(row.config, row);
    }
  }
  return [...byConfig.values()];
}
