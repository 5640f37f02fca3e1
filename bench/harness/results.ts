import type { IdleDemoResult } from './idle-demo.ts';
import type { LoadResult, LoadTool } from './load.ts';
import type { RuntimeSample } from './runtime-meter.ts';

/** One measured run: the load generator's view plus what the proxy process used meanwhile. */
export interface RunSample extends LoadResult {
  /** CPU seconds the proxy tree used during the run, divided by the run's wall time. */
  readonly proxyCpuCores?: number;
  readonly proxyRssBytes?: number;
  /** Route-file rewrites done during the run (config-churn). */
  readonly churns?: number;
  /**
   * CPU the proxy's core spent on anything but the proxy during the run (other processes on a shared
   * machine), in cores; above ~0.05 the proxy did not have its core to itself.
   */
  readonly foreignCpuOnProxyCore?: number;
  /** A Node proxy's event-loop delay, GC pauses and freed bytes during the run. */
  readonly runtime?: RuntimeSample;
}

/** The id suffix of a config that runs the `--baseline` build. */
export const BASELINE_SUFFIX = '-baseline';

export interface Ratios {
  readonly direct?: number;
  readonly nginx?: number;
  readonly undici?: number;
  /** req/s per proxy core against the Node TCP splice's: how close to Node's socket floor. */
  readonly splicePerCore?: number;
}

export interface ResultRow {
  readonly scenario: string;
  readonly config: string;
  readonly label: string;
  readonly status: 'ok' | 'skipped';
  readonly reason?: string;
  readonly tool?: LoadTool;
  readonly runs: readonly RunSample[];
  /**
   * wrk only: one more run after `runs`, with wrk's script numbering and timing every request
   * (perRequestLatencyMs: its times without wrk's coordinated-omission correction). Kept out of `runs`: its
   * Lua hooks cost wrk CPU on the core it shares with the backend and lower the rate.
   */
  readonly perRequestPass?: RunSample;
  /** Medians over runs (latency maxima: the max over runs). */
  readonly rps?: number;
  /** Median over runs of the bytes the load generator read per second, in MB (10^6 bytes). */
  readonly mbPerSec?: number;
  readonly p50Ms?: number;
  readonly p99Ms?: number;
  readonly p999Ms?: number;
  readonly maxMs?: number;
  /** wrk only: perRequestPass.perRequestLatencyMs, wrk's per-request times without its correction. */
  readonly perRequestP50Ms?: number;
  readonly perRequestP99Ms?: number;
  readonly perRequestP999Ms?: number;
  readonly perRequestMaxMs?: number;
  readonly errors?: number;
  readonly non2xx?: number;
  readonly proxyCpuCores?: number;
  /** req/s divided by the proxy's measured CPU use (cores); the "per proxy core" figure. */
  readonly rpsPerProxyCore?: number;
  readonly rssMiB?: number;
  /** Median over runs of RunSample.foreignCpuOnProxyCore. */
  readonly foreignCpuOnProxyCore?: number;
  /** Medians over runs of a Node proxy's runtime figures (RunSample.runtime). */
  readonly loopP99Ms?: number;
  readonly loopMaxMs?: number;
  /** GC pause per second of run, in ms (so 10 means 1% of the time stopped). */
  readonly gcMsPerSec?: number;
  readonly gcMaxPauseMs?: number;
  /** Bytes the collector freed per request served: the steady-state allocation per request. */
  readonly allocBytesPerRequest?: number;
  readonly ratios?: Ratios;
}

export interface ScenarioResult {
  readonly name: string;
  readonly title: string;
  readonly connections: number;
  readonly notes: readonly string[];
  readonly rows: readonly ResultRow[];
  /** Derived one-liners (added latency, 10k/10 route ratio, errors under churn). */
  readonly findings: readonly string[];
}

export interface MachineInfo {
  readonly cpuModel: string;
  readonly cores: number;
  readonly node: string;
  readonly os: string;
  readonly tools: Readonly<Record<string, string>>;
  /** At the end of the run: other work on a shared machine makes every number noisier. */
  readonly loadAverage1m: number;
}

export interface SuiteResult {
  readonly version: 1;
  readonly startedAt: string;
  readonly finishedAt: string;
  readonly machine: MachineInfo;
  readonly options: {
    readonly durationSec: number;
    readonly runs: number;
    readonly warmupSec: number;
    readonly tools: readonly LoadTool[];
  };
  readonly cpuPlan: string;
  readonly backend: string;
  readonly notes: readonly string[];
  readonly scenarios: readonly ScenarioResult[];
  /** `npm start`'s demo at rest (--idle-demo). */
  readonly idleDemo?: IdleDemoResult;
}
