/**
 * What tracing costs (issue 46), measured so that a shared machine disturbs it little: two gateways side by side,
 * both pinned to the proxy core and loaded at the same time by a wrk each (50 connections, the `small` answer),
 * so whatever else runs on the machine takes from both alike. Tracing off (this checkout's build) against one of:
 *
 * - `before`: another build, `--baseline <main.js>` (the commit before tracing: does off cost anything?);
 * - `1pct`, `1`: the same build with tracing on at ratio 0.01 or 1, exporting to the bench's OTLP sink.
 *
 * Each round prints both sides' req/s, the CPU they used (from /proc) per request, p99, and the ratios; the CPU per
 * request is the figure to read. Reported, never asserted.
 *
 *   timeout 600 node --import tsx bench/tracing-side-by-side.ts --against before --baseline /tmp/old/dist/main.js
 *   timeout 600 node --import tsx bench/tracing-side-by-side.ts --against 1pct [--rounds 6] [--seconds 10]
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { pinSelf, planCpus } from './harness/affinity.ts';
import { startBackend } from './harness/backend.ts';
import { compilePrograms, SHIPPED_NODE_FLAGS } from './harness/compiled.ts';
import { type ConfigSpec, type StartedConfig, startConfig } from './harness/configs.ts';
import type { LoadSpec } from './harness/load.ts';
import { freePorts } from './harness/ports.ts';
import { treeCpuSeconds } from './harness/processes.ts';
import { findScenarios } from './harness/scenarios.ts';
import { runWrk } from './harness/wrk-load.ts';

const { values } = parseArgs({
  options: {
    against: { type: 'string', default: 'before' },
    baseline: { type: 'string' },
    rounds: { type: 'string', default: '6' },
    seconds: { type: 'string', default: '10' },
  },
});
const projectDir = resolve(import.meta.dirname, '..');
const log = (line: string): void => {
  process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);
};

/** The config measured beside tracing off. */
function other(configs: readonly ConfigSpec[], off: ConfigSpec): ConfigSpec {
  switch (values.against) {
    case 'before': {
      if (!values.baseline) throw new Error('--against before needs --baseline <main.js>');
      return {
        ...off,
        id: 'before',
        label: 'the --baseline build',
        program: [...SHIPPED_NODE_FLAGS, resolve(values.baseline)],
      };
    }
    case '1pct':
    case '1': {
      const id = values.against === '1' ? 'gateway-traced' : 'gateway-traced-1pct';
      const found = configs.find((c) => c.id === id);
      if (!found) throw new Error(`no ${id} config`);
      return found;
    }
    default:
      throw new Error(`--against is before, 1pct or 1, not ${values.against}`);
  }
}

interface Side {
  readonly started: StartedConfig;
  readonly spec: LoadSpec;
}

async function round(sides: readonly Side[]): Promise<{ rps: number; usPerRequest: number; p99: number }[]> {
  const before = sides.map((s) => treeCpuSeconds(s.started.proxy?.pid ?? -1) ?? 0);
  const results = await Promise.all(sides.map((s) => runWrk(s.spec)));
  return results.map((result, i) => {
    const cpu = (treeCpuSeconds(sides[i]?.started.proxy?.pid ?? -1) ?? 0) - (before[i] ?? 0);
    return { rps: result.rps, usPerRequest: (cpu * 1e6) / result.requests, p99: result.latencyMs.p99 };
  });
}

async function main(): Promise<void> {
  const rounds = Number(values.rounds);
  const seconds = Number(values.seconds);
  const cpu = planCpus();
  log(cpu.note);
  pinSelf(cpu);
  const programs = compilePrograms(projectDir, log);
  const [port] = await freePorts(1);
  const backend = await startBackend({
    cpus: cpu.loadCpus,
    endpoints: [{ address: '127.0.0.1', port: port ?? 0 }],
    projectDir,
    programs,
  });
  const started: StartedConfig[] = [];
  try {
    const [small] = findScenarios(['small']);
    const configs = small?.configs(backend.endpoints) ?? [];
    const off = configs.find((c) => c.id === 'gateway');
    if (!off) throw new Error('no gateway config');
    const probe = { host: 'bench.test', path: '/' };
    const sides: Side[] = [];
    for (const config of [off, other(configs, off)]) {
      const outcome = await startConfig(config, {
        proxyCpus: cpu.proxyCpus,
        loadCpus: cpu.loadCpus,
        projectDir,
        programs,
        traffic: 'http',
        upstream: backend.endpoints,
        probe,
        gatewayReadyTimeoutMs: 60_000,
      });
      if (!outcome.ok) throw new Error(`${config.label}: ${outcome.reason}`);
      started.push(outcome.started);
      sides.push({
        started: outcome.started,
        spec: {
          origin: outcome.started.origin,
          method: 'GET',
          targets: [probe],
          connections: 50,
          durationSec: seconds,
          cpus: cpu.loadCpus,
        },
      });
    }
    const label = other(configs, off).label;
    log(`warm-up: both at once, ${seconds} s`);
    await round(sides);
    for (let r = 1; r <= rounds; r++) {
      const [a, b] = await round(sides);
      if (!a || !b) continue;
      const side = (name: string, s: typeof a): string =>
        `${name} ${Math.round(s.rps)} req/s, ${s.usPerRequest.toFixed(1)} us CPU/req, p99 ${s.p99.toFixed(1)} ms`;
      process.stdout.write(
        `round ${r}: ${side('off', a)} | ${side(label, b)} | req/s ${(b.rps / a.rps).toFixed(3)}x, CPU/req ${(b.usPerRequest / a.usPerRequest).toFixed(3)}x\n`,
      );
    }
    const report = await started[1]?.report?.();
    if (report) process.stdout.write(`${report}\n`);
  } finally {
    for (const s of started) await s.stop();
    await backend.stop();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`tracing-side-by-side: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
