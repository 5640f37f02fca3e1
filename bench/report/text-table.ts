import type { SuiteResult } from '../harness/results.ts';
import { COLUMNS, rowCells } from './format.ts';

/** The console table: one block per scenario, columns padded, numbers right-aligned. */
export function textTable(result: SuiteResult): string {
  const out: string[] = [];
  for (const scenario of result.scenarios) {
    const rows = scenario.rows.map(rowCells);
    const skippedOnly = (cells: string[]): boolean => cells[1]?.startsWith('skipped') ?? false;
    const widths = COLUMNS.map((title, i) =>
      Math.max(
        title.length,
        ...rows.filter((r) => !skippedOnly(r) || i === 0).map((r) => (r[i] ?? '').length),
      ),
    );
    const line = (cells: readonly string[]): string =>
      cells
        .map((cell, i) => (i < 2 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0)))
        .join('  ')
        .trimEnd();
    out.push('', `== ${scenario.name}: ${scenario.title}`);
    out.push(line(COLUMNS), line(widths.map((w) => '-'.repeat(w))));
    for (const cells of rows) {
      out.push(skippedOnly(cells) ? `${(cells[0] ?? '').padEnd(widths[0] ?? 0)}  ${cells[1]}` : line(cells));
    }
    for (const finding of scenario.findings) out.push(`  * ${finding}`);
    for (const note of scenario.notes) out.push(`  note: ${note}`);
  }
  out.push(
    '',
    `machine: ${result.machine.cpuModel}, ${result.machine.cores} cores, node ${result.machine.node}, ${result.machine.os}, load average ${result.machine.loadAverage1m.toFixed(2)}`,
    '"others on proxy CPU": CPU time other processes (and interrupts) took on the proxy core during the runs; above a few % the numbers are disturbed',
    `cpu: ${result.cpuPlan}`,
    result.backend,
    `runs: ${result.options.runs} x ${result.options.durationSec}s per tool after ${result.options.warmupSec}s warm-up; medians shown; latency max is the max over runs`,
    ...result.notes,
    '',
  );
  return out.join('\n');
}
