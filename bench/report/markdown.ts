import type { IdleDemoResult } from '../harness/idle-demo.ts';
import type { SuiteResult } from '../harness/results.ts';
import { COLUMNS, rowCells } from './format.ts';

function escapeCell(text: string): string {
  return text.replaceAll('|', '\\|');
}

/** The table the README shows, with the machine it ran on. */
export function markdownReport(result: SuiteResult): string {
  const { machine } = result;
  const tools = Object.entries(machine.tools)
    .map(([name, version]) => `${name} ${version}`)
    .join(', ');
  const out: string[] = [
    `Measured ${result.finishedAt.slice(0, 10)} on ${machine.cpuModel}, ${machine.cores} cores, Node.js ${machine.node}, ${machine.os}${tools ? `; ${tools}` : ''}.`,
    '',
    `- ${result.cpuPlan}`,
    `- ${result.backend}`,
    `- ${result.options.runs} runs of ${result.options.durationSec}s per load generator after a ${result.options.warmupSec}s warm-up; medians of req/s and percentiles, max of RSS. "req/s per proxy core" divides req/s by the CPU the proxy actually used. Ratios compare req/s with the same load generator.`,
    `- Load average at the end: ${machine.loadAverage1m.toFixed(2)}. "others on proxy CPU" is the CPU other processes (and interrupts) took on the proxy's core during the runs; above a few percent the proxy did not have its core to itself.`,
    '- autocannon records latency in whole milliseconds; use the wrk rows for sub-millisecond latency.',
    ...result.notes.map((n) => `- ${n}`),
  ];
  for (const scenario of result.scenarios) {
    out.push('', `### ${scenario.title}`, '');
    out.push(
      `| ${COLUMNS.join(' | ')} |`,
      `|${COLUMNS.map((_, i) => (i < 2 ? ' --- ' : ' ---: ')).join('|')}|`,
    );
    for (const row of scenario.rows) {
      if (row.status === 'skipped') {
        out.push(
          `| ${escapeCell(row.label)} | skipped: ${escapeCell(row.reason ?? '')} |${' |'.repeat(COLUMNS.length - 2)}`,
        );
      } else {
        out.push(`| ${rowCells(row).map(escapeCell).join(' | ')} |`);
      }
    }
    if (scenario.findings.length > 0 || scenario.notes.length > 0) out.push('');
    for (const finding of scenario.findings) out.push(`- ${escapeCell(finding)}`);
    for (const note of scenario.notes) out.push(`- note: ${escapeCell(note)}`);
  }
  if (result.idleDemo) out.push('', ...idleDemoSection(result.idleDemo));
  return `${out.join('\n')}\n`;
}

/** One row per build: the gateway process's RSS at each sample time, every run, and the demo world beside it. */
function idleDemoSection(idle: IdleDemoResult): string[] {
  const mib = (value: number): string => value.toFixed(1);
  const times = idle.samplesAtSec.map((s) => `${s} s`).join(' / ');
  const out = [
    '### Idle demo (`npm start`, no traffic)',
    '',
    `RSS of the gateway process, MiB, ${times} after /readyz answers; runs of the builds take turns. The demo's world (simulated pods and member API servers) is a child process, shown apart.`,
    '',
    '| build | command | runs (MiB) | max | world MiB |',
    '| --- | --- | --- | ---: | ---: |',
  ];
  for (const build of idle.builds) {
    if (build.failure !== undefined && build.runs.length === 0) {
      out.push(
        `| ${escapeCell(build.name)} | \`${build.command}\` | failed: ${escapeCell(build.failure)} | | |`,
      );
      continue;
    }
    const runs = build.runs.map((run) => run.gatewayMiB.map(mib).join(' / ')).join('; ');
    const max = Math.max(...build.runs.flatMap((run) => run.gatewayMiB));
    const worlds = build.runs.flatMap((run) => (run.worldMiB === undefined ? [] : [run.worldMiB]));
    const world = worlds.length === 0 ? '-' : mib(Math.max(...worlds));
    out.push(`| ${escapeCell(build.name)} | \`${build.command}\` | ${runs} | ${mib(max)} | ${world} |`);
  }
  return out;
}
