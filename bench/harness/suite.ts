import { setTimeout as sleep } from 'node:timers/promises';
import type { CpuPlan } from './affinity.ts';
import { runAutocannon } from './autocannon-load.ts';
import { type RunningBackend, startBackend } from './backend.ts';
import {
  type BenchCertificate,
  makeBenchCertificate,
  removeBenchCertificate,
  TLS_SERVER_NAME,
} from './bench-certificate.ts';
import type { Programs } from './compiled.ts';
import { type ConfigSpec, type StartedConfig, startConfig } from './configs.ts';
import type { Endpoint } from './endpoints.ts';
import { runGrpc } from './grpc-load.ts';
import { runH2load } from './h2load-load.ts';
import { runTlsNew, runTlsResumed } from './handshake-load.ts';
import type { LoadResult, LoadSpec, LoadTool } from './load.ts';
import { describeMachine } from './machine.ts';
import { freePorts } from './ports.ts';
import { busySecondsOn, cpuBusySeconds, treeCpuSeconds, treeRssBytes } from './processes.ts';
import {
  BASELINE_SUFFIX,
  type ResultRow,
  type RunSample,
  type ScenarioResult,
  type SuiteResult,
} from './results.ts';
import { planEndpoints, portsNeeded, type Scenario } from './scenarios.ts';
import { derive } from './summarize.ts';
import { isSelected } from './traced-configs.ts';
import { usesTls } from './traffic.ts';
import { runWrk } from './wrk-load.ts';

export interface SuiteOptions {
  readonly scenarios: readonly Scenario[];
  /** Only these config kinds and opt-in config ids (all but the opt-in ones when empty). */
  readonly onlyConfigs?: readonly string[];
  readonly tools: readonly LoadTool[];
  readonly durationSec: number;
  readonly runs: number;
  readonly warmupSec: number;
  readonly cpu: CpuPlan;
  readonly projectDir: string;
  /** How each Node program is started: compiled (`npm run bench`) or from source (the smoke test). */
  readonly programs: Programs;
  readonly forceNodeBackend?: boolean;
  readonly gatewayReadyTimeoutMs?: number;
  readonly cpuProfDir?: string;
  /** Another build of the gateway, measured right after each gateway config as `<id>-baseline`. */
  readonly baseline?: Baseline;
  /** Progress lines (stderr in the CLI). */
  readonly log: (line: string) => void;
  readonly notes?: readonly string[];
}

/** Every core for everyone, still through taskset (so wrk leaves the runner's core). */
function unpinned(plan: CpuPlan): CpuPlan {
  if (!plan.pinned) return plan;
  const all = `0-${plan.cores - 1}`;
  return { ...plan, proxyCpus: all, loadCpus: all, note: `${plan.note}; unpinned scenarios: all on ${all}` };
}

export interface Baseline {
  /** `node <program...>`: its compiled main.js (and any Node flags before it). */
  readonly program: readonly string[];
  /** What it is, for the label: a commit, a path. */
  readonly name: string;
}

/**
 * Each gateway config followed by its twin running the baseline build, so both see the same machine state.
 * Traced configs have none: a before/after compares builds, and a build before tracing has no tracing flags.
 */
export function withBaseline(configs: readonly ConfigSpec[], baseline: Baseline | undefined): ConfigSpec[] {
  if (!baseline) return [...configs];
  return configs.flatMap((config) =>
    config.kind === 'gateway' && !config.program && !config.tracing
      ? [
          config,
          {
            ...config,
            id: `${config.id}${BASELINE_SUFFIX}`,
            label: `${config.label} at ${baseline.name} (baseline)`,
            program: baseline.program,
          },
        ]
      : [config],
  );
}

const LOADERS: Readonly<Record<LoadTool, (spec: LoadSpec) => Promise<LoadResult>>> = {
  autocannon: runAutocannon,
  wrk: runWrk,
  grpc: runGrpc,
  'tls-new': runTlsNew,
  'tls-resumed': runTlsResumed,
  h2load: runH2load,
};

export async function runSuite(options: SuiteOptions): Promise<SuiteResult> {
  const startedAt = new Date().toISOString();
  const scenarios: ScenarioResult[] = [];
  const backendNotes = new Set<string>();
  let certificate: BenchCertificate | undefined;
  for (const scenario of options.scenarios) {
    const cpu = scenario.cpu === 'unpinned' ? unpinned(options.cpu) : options.cpu;
    const traffic = scenario.traffic ?? 'http';
    const tls = usesTls(traffic);
    if (tls && !certificate) {
      options.log('making a self-signed certificate for the TLS scenarios (openssl)');
      certificate = await makeBenchCertificate();
    }
    const ports = await freePorts(portsNeeded(scenario.upstream) + (tls ? 1 : 0));
    const endpoints = planEndpoints(scenario.upstream, ports);
    const httpsPort = tls ? ports[ports.length - 1] : undefined;
    options.log(
      `[${scenario.name}] ${scenario.title}: starting ${traffic === 'grpc' ? 'gRPC ' : ''}backend (${endpoints.length} endpoint(s)${tls ? ' and an HTTPS listener' : ''})`,
    );
    const backend = await startBackend({
      cpus: cpu.loadCpus,
      endpoints,
      projectDir: options.projectDir,
      programs: options.programs,
      ...(options.forceNodeBackend ? { forceNode: true } : {}),
      ...(traffic === 'grpc' ? { grpc: true } : {}),
      ...(httpsPort !== undefined && certificate
        ? { https: { endpoint: { address: '127.0.0.1', port: httpsPort }, certificate } }
        : {}),
    });
    backendNotes.add(backend.note);
    const rows: ResultRow[] = [];
    const reports: string[] = [];
    try {
      // Passthrough proxies relay to the backend's own TLS listener; everything else to its plain one.
      const upstream: readonly Endpoint[] =
        traffic === 'tls-passthrough' && backend.https ? [backend.https] : backend.endpoints;
      const configs = withBaseline(
        scenario.configs(upstream).filter((c) => isSelected(c, options.onlyConfigs)),
        options.baseline,
      );
      const measured = await measureScenario(
        scenario,
        configs,
        backend,
        upstream,
        { ...options, cpu },
        certificate,
      );
      rows.push(...measured.rows);
      reports.push(...measured.reports);
    } finally {
      await backend.stop();
    }
    const { rows: withRatios, findings } = derive(scenario, rows);
    scenarios.push({
      name: scenario.name,
      title: scenario.title,
      connections: scenario.connections,
      notes: scenario.notes,
      rows: withRatios,
      findings: [...findings, ...reports],
    });
    for (const finding of [...findings, ...reports]) options.log(`[${scenario.name}] ${finding}`);
  }
  if (certificate) await removeBenchCertificate(certificate);
  return {
    version: 1,
    startedAt,
    finishedAt: new Date().toISOString(),
    machine: describeMachine(),
    options: {
      durationSec: options.durationSec,
      runs: options.runs,
      warmupSec: options.warmupSec,
      tools: [...new Set(options.scenarios.flatMap((s) => s.tools ?? options.tools))],
    },
    cpuPlan: options.cpu.note,
    backend: [...backendNotes].join('; '),
    notes: options.notes ?? [],
    scenarios,
  };
}

interface LiveConfig {
  readonly config: ConfigSpec;
  readonly started: StartedConfig;
  readonly spec: Omit<LoadSpec, 'durationSec'>;
  readonly samples: Map<LoadTool, RunSample[]>;
  /** The wrk pass with per-request timing (ResultRow.perRequestPass). */
  perRequestPass?: RunSample;
  failed?: string;
}

/**
 * Starts every config of the scenario, then interleaves the runs: run k of every config before run k+1 of
 * any. Idle proxies cost nothing, and on a shared or throttling machine a burst of outside load then hits all
 * configs alike instead of whichever happened to be measured at the time.
 */
async function measureScenario(
  scenario: Scenario,
  configs: readonly ConfigSpec[],
  backend: RunningBackend,
  upstream: readonly Endpoint[],
  options: SuiteOptions,
  certificate: BenchCertificate | undefined,
): Promise<{ rows: ResultRow[]; reports: string[] }> {
  const tag = `[${scenario.name}]`;
  const traffic = scenario.traffic ?? 'http';
  const tools = scenario.tools ?? options.tools;
  const skippedRow = (config: ConfigSpec, reason: string): ResultRow => {
    options.log(`${tag} ${config.label}: skipped: ${reason}`);
    return {
      scenario: scenario.name,
      config: config.id,
      label: config.label,
      status: 'skipped',
      reason,
      runs: [],
    };
  };
  const slots: (LiveConfig | ResultRow)[] = [];
  const live: LiveConfig[] = [];
  const reports: string[] = [];
  try {
    for (const config of configs) {
      const targets = scenario.targets(config);
      const [probe] = targets;
      if (!probe) {
        slots.push(skippedRow(config, 'no targets'));
        continue;
      }
      options.log(`${tag} ${config.label}: starting`);
      const outcome = await startConfig(config, {
        proxyCpus: options.cpu.proxyCpus,
        loadCpus: options.cpu.loadCpus,
        projectDir: options.projectDir,
        programs: options.programs,
        traffic,
        upstream,
        ...(backend.https ? { backendHttps: backend.https } : {}),
        ...(certificate ? { certificate } : {}),
        probe,
        gatewayReadyTimeoutMs: options.gatewayReadyTimeoutMs ?? 60_000,
        ...(options.cpuProfDir && config.kind === 'gateway' && !config.program
          ? { cpuProfDir: options.cpuProfDir }
          : {}),
      });
      if (!outcome.ok) {
        slots.push(skippedRow(config, outcome.reason));
        continue;
      }
      const entry: LiveConfig = {
        config,
        started: outcome.started,
        spec: {
          origin: outcome.started.origin,
          ...(usesTls(traffic) ? { serverName: TLS_SERVER_NAME } : {}),
          method: scenario.method,
          targets,
          connections: scenario.connections,
          ...(scenario.streamsPerConnection ? { streamsPerConnection: scenario.streamsPerConnection } : {}),
          ...(scenario.bodyBytes ? { bodyBytes: scenario.bodyBytes } : {}),
          ...(scenario.cpu === 'unpinned' ? { cpus: options.cpu.loadCpus } : {}),
        },
        samples: new Map(tools.map((t) => [t, []])),
      };
      live.push(entry);
      slots.push(entry);
    }

    const attempt = async (entry: LiveConfig, work: () => Promise<void>): Promise<void> => {
      if (entry.failed) return;
      try {
        await work();
      } catch (error) {
        const message = error instanceof Error ? error.message.split('\n')[0] : String(error);
        // A proxy that died mid-run is the finding, not the load generator's connection errors.
        const proxy = entry.started.proxy;
        entry.failed = proxy?.exited
          ? `the proxy process ${proxy.describeExit()}`
          : `load failed: ${message}`;
        options.log(`${tag} ${entry.config.label}: ${entry.failed}`);
      }
    };
    if (options.warmupSec > 0) {
      const tool = tools[0] ?? 'autocannon';
      for (const entry of live) {
        options.log(`${tag} ${entry.config.label}: warm-up ${options.warmupSec}s (${tool})`);
        await attempt(entry, async () => {
          await LOADERS[tool]({ ...entry.spec, durationSec: options.warmupSec });
        });
      }
    }
    for (let run = 1; run <= options.runs; run++) {
      for (const entry of live) {
        for (const tool of tools) {
          await attempt(entry, async () => {
            const sample = await measureRun(
              entry.started,
              entry.config,
              { ...entry.spec, durationSec: options.durationSec },
              tool,
              options.cpu.proxyCpus,
            );
            entry.samples.get(tool)?.push(sample);
            options.log(
              `${tag} ${entry.config.label} ${tool} run ${run}/${options.runs}: ${Math.round(sample.rps).toLocaleString('en-US')} req/s, p99 ${sample.latencyMs.p99.toFixed(2)} ms, errors ${sample.errors}, non-2xx ${sample.non2xx}${sample.churns !== undefined ? `, ${sample.churns} config changes` : ''}`,
            );
          });
        }
      }
    }
    // wrk's own per-request times, in a pass of their own: the Lua hooks cost wrk CPU on the core it
    // shares with the backend, which would lower the measured runs' rates.
    if (tools.includes('wrk')) {
      for (const entry of live) {
        await attempt(entry, async () => {
          const sample = await measureRun(
            entry.started,
            entry.config,
            { ...entry.spec, durationSec: options.durationSec, perRequestLatency: true },
            'wrk',
            options.cpu.proxyCpus,
          );
          entry.perRequestPass = sample;
          const perRequest = sample.perRequestLatencyMs;
          options.log(
            `${tag} ${entry.config.label} wrk per-request pass: ${Math.round(sample.rps).toLocaleString('en-US')} req/s, p99 ${sample.latencyMs.p99.toFixed(2)} ms, per request (uncorrected) p99 ${perRequest ? perRequest.p99.toFixed(2) : 'n/a'} ms, ${perRequest?.requests ?? 0} of ${sample.requests} answers paired`,
          );
        });
      }
    }
  } finally {
    for (const entry of live) {
      const report = await entry.started
        .report?.()
        .catch(
          (error: unknown) =>
            `${entry.config.label}: no report (${error instanceof Error ? error.message : String(error)})`,
        );
      if (report !== undefined) reports.push(report);
      await entry.started.stop();
    }
  }
  const rows = slots.flatMap((slot): ResultRow[] => {
    if (!('started' in slot)) return [slot];
    if (slot.failed) return [skippedRow(slot.config, slot.failed)];
    return tools.map((tool) => ({
      scenario: scenario.name,
      config: slot.config.id,
      label: slot.config.label,
      status: 'ok' as const,
      tool,
      runs: slot.samples.get(tool) ?? [],
      ...(tool === 'wrk' && slot.perRequestPass ? { perRequestPass: slot.perRequestPass } : {}),
    }));
  });
  return { rows, reports };
}

async function measureRun(
  started: StartedConfig,
  config: ConfigSpec,
  spec: LoadSpec,
  tool: LoadTool,
  proxyCpus: string,
): Promise<RunSample> {
  const pid = started.proxy?.pid;
  const cpuBefore = pid === undefined ? undefined : treeCpuSeconds(pid);
  const coreBefore = busySecondsOn(proxyCpus, cpuBusySeconds());
  const t0 = process.hrtime.bigint();
  let churns: number | undefined;
  let stopChurn: (() => Promise<void>) | undefined;
  if (config.churnIntervalMs && started.churn) {
    const churn = started.churn;
    churns = 0;
    let active = true;
    let generation = Date.now();
    const loop = (async () => {
      while (active) {
        await churn(generation++);
        churns = (churns ?? 0) + 1;
        await sleep(config.churnIntervalMs);
      }
    })();
    stopChurn = async () => {
      active = false;
      await loop;
    };
  }
  await started.runtime?.sample(); // resets the probe: the next sample covers this run only
  let result: LoadResult;
  try {
    result = await LOADERS[tool](spec);
  } finally {
    await stopChurn?.();
  }
  const wallSec = Number(process.hrtime.bigint() - t0) / 1e9;
  const runtime = await started.runtime?.sample();
  const cpuAfter = pid === undefined ? undefined : treeCpuSeconds(pid);
  const coreAfter = busySecondsOn(proxyCpus, cpuBusySeconds());
  const rss = pid === undefined ? undefined : treeRssBytes(pid);
  const proxyCpuCores =
    cpuBefore !== undefined && cpuAfter !== undefined ? (cpuAfter - cpuBefore) / wallSec : undefined;
  const coreBusy =
    coreBefore !== undefined && coreAfter !== undefined ? (coreAfter - coreBefore) / wallSec : undefined;
  return {
    ...result,
    ...(proxyCpuCores !== undefined ? { proxyCpuCores } : {}),
    ...(coreBusy !== undefined
      ? { foreignCpuOnProxyCore: Math.max(0, coreBusy - (proxyCpuCores ?? 0)) }
      : {}),
    ...(rss !== undefined ? { proxyRssBytes: rss } : {}),
    ...(churns !== undefined ? { churns } : {}),
    ...(runtime !== undefined ? { runtime } : {}),
  };
}
