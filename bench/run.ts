import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { hasCommand, pinSelf, planCpus } from './harness/affinity.ts';
import { BENCH_HELP, parseBenchArgs } from './harness/cli-args.ts';
import { compilePrograms, type Programs, SHIPPED_NODE_FLAGS } from './harness/compiled.ts';
import { measureIdleDemo } from './harness/idle-demo.ts';
import type { LoadTool } from './harness/load.ts';
import { findScenarios } from './harness/scenarios.ts';
import { type Baseline, runSuite } from './harness/suite.ts';
import { OPT_IN_CONFIG_IDS } from './harness/traced-configs.ts';
import { profileBusyMs, summarizeProfileFile } from './profile/summarize-cpuprofile.ts';
import { textTable } from './report/text-table.ts';
import { writeResults } from './report/write-results.ts';

/** `npm run bench`: every scenario against every config on loopback; one table, JSON, SVG and markdown. */
async function main(): Promise<void> {
  const args = parseBenchArgs(process.argv.slice(2));
  if (args.help) {
    process.stdout.write(BENCH_HELP);
    return;
  }
  const projectDir = resolve(fileURLToPath(new URL('..', import.meta.url)));
  const log = (line: string): void => {
    process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);
  };
  const notes: string[] = [];

  const missing = ['nginx', 'haproxy', 'wrk', 'h2load'].filter((tool) => !hasCommand(tool));
  if (missing.length > 0 && args.install) {
    log(`missing ${missing.join(', ')}: running scripts/install-bench-tools.sh`);
    try {
      execFileSync('sh', [join(projectDir, 'scripts/install-bench-tools.sh')], { stdio: ['ignore', 2, 2] });
    } catch {
      log('install-bench-tools.sh failed; continuing without the missing tools');
    }
  }
  for (const tool of ['nginx', 'haproxy', 'wrk', 'h2load']) {
    if (!hasCommand(tool))
      notes.push(
        `${tool} is not installed: its ${tool === 'wrk' || tool === 'h2load' ? 'rows' : 'config'} are skipped`,
      );
  }

  const tools: LoadTool[] = (args.tools ?? ['wrk', 'autocannon']).filter(
    (t) => t !== 'wrk' || hasCommand('wrk'),
  );
  if (tools.length === 0) throw new Error('no load generator available');

  const cpu = planCpus();
  log(cpu.note);
  pinSelf(cpu);

  const nodeFlags = args.nodeFlags ?? SHIPPED_NODE_FLAGS;
  if (args.gatewayArgs.length > 0)
    notes.push(`the gateway runs with the flags ${args.gatewayArgs.join(' ')}`);
  if (args.nodeFlags) notes.push(`the gateway runs with the Node flags ${nodeFlags.join(' ') || '(none)'}`);
  const baseline =
    args.baseline === undefined
      ? undefined
      : describeBaseline(resolve(args.baseline), args.baselineNodeFlags ?? nodeFlags, nodeFlags);
  if (baseline)
    notes.push(`baseline: the build of ${baseline.name}, measured right after each gateway config`);

  if (args.configs.some((c) => OPT_IN_CONFIG_IDS.includes(c)))
    notes.push(
      'traced configs: the same gateway with --otlp-endpoint to a local OTLP/HTTP sink (bench/peers/otlp-sink.ts, on the load-generator core: it counts the spans and discards them) and --trace-sample-ratio 1 or 0.01, the other trace flags at their defaults',
    );

  const outDir = resolve(projectDir, args.out);
  const cpuProfDir = args.cpuProf ? join(outDir, 'profiles') : undefined;
  if (cpuProfDir) await mkdir(cpuProfDir, { recursive: true });
  const profilesBefore = new Set(cpuProfDir ? await readdir(cpuProfDir) : []);

  const suite = await runSuite({
    scenarios: findScenarios(args.scenarios),
    onlyConfigs: args.configs,
    tools,
    durationSec: args.durationSec,
    runs: args.runs,
    warmupSec: args.warmupSec,
    cpu,
    projectDir,
    programs: withGatewayArgs(compilePrograms(projectDir, log, nodeFlags), args.gatewayArgs),
    forceNodeBackend: args.nodeBackend,
    log,
    notes,
    ...(cpuProfDir ? { cpuProfDir } : {}),
    ...(baseline ? { baseline } : {}),
  });
  const result = args.idleDemo
    ? {
        ...suite,
        idleDemo: await measureIdleDemo(
          [
            { name: 'clusterset-gateway', projectDir },
            // The baseline's own checkout and its own npm start: dist/main.js sits in its project folder.
            ...(baseline && args.baseline !== undefined
              ? [{ name: baseline.name, projectDir: dirname(dirname(resolve(args.baseline))) }]
              : []),
          ],
          args.runs,
          cpu.proxyCpus,
          log,
        ),
      }
    : suite;

  process.stdout.write(textTable(result));
  const files = await writeResults(result, outDir, args.name);
  log(`wrote ${files.json}, ${files.svg}, ${files.markdown}`);

  if (cpuProfDir) {
    // One profile per thread (workers, if any). Summarize the busy ones.
    const fresh = (await readdir(cpuProfDir)).filter(
      (f) => f.endsWith('.cpuprofile') && !profilesBefore.has(f),
    );
    const busy = await Promise.all(
      fresh.map(async (f) => ({ f, ms: await profileBusyMs(join(cpuProfDir, f)) })),
    );
    const max = Math.max(0, ...busy.map((b) => b.ms));
    for (const { f } of busy.filter((b) => b.ms >= max / 4).sort((a, b) => a.f.localeCompare(b.f))) {
      process.stdout.write(`\n== gateway CPU profile ${join(args.out, 'profiles', f)}\n`);
      process.stdout.write(await summarizeProfileFile(join(cpuProfDir, f), 30));
    }
  }
}

/**
 * The build given with --baseline, named by its checkout's commit when it is in one, and by its Node flags when
 * they are not the gateway's. It runs with the gateway's flags unless told otherwise: a before/after compares
 * builds, not flags.
 */
function describeBaseline(
  mainJs: string,
  flags: readonly string[],
  gatewayFlags: readonly string[],
): Baseline {
  if (!existsSync(mainJs)) throw new Error(`--baseline ${mainJs}: no such file (build it: npm run build)`);
  // Results never name a machine's folders: a commit, or a neutral name.
  let name = 'the --baseline build';
  try {
    name = execFileSync('git', ['-C', dirname(mainJs), 'rev-parse', '--short', 'HEAD'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    // Not in a git checkout.
  }
  if (flags.join(' ') !== gatewayFlags.join(' ')) name = `${name} with ${flags.join(' ') || 'no Node flags'}`;
  return { program: [...flags, mainJs], name };
}

main().catch((error: unknown) => {
  process.stderr.write(`bench: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});

/** This checkout's gateway started with `--gateway-args` after its main.js (the baseline keeps its own program). */
function withGatewayArgs(programs: Programs, gatewayArgs: readonly string[]): Programs {
  return gatewayArgs.length === 0
    ? programs
    : { ...programs, gateway: [...programs.gateway, ...gatewayArgs] };
}
