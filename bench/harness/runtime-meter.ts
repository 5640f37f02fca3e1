import type { BenchProcess } from './processes.ts';

/** What one Node process did during one measured run (bench/peers/runtime-probe.ts and --trace-gc). */
export interface RuntimeSample {
  readonly loopP50Ms: number;
  readonly loopP99Ms: number;
  readonly loopMaxMs: number;
  readonly gcCount: number;
  readonly gcPauseMs: number;
  readonly gcMaxPauseMs: number;
  /** Bytes the collector freed during the run (from --trace-gc): in a steady state, what was allocated. */
  readonly freedBytes: number;
}

const REPORT = /^CSG_RUNTIME (\{.*\})$/;
// `[pid:0x..]   1234 ms: Scavenge 30.6 (50.1) -> 17.6 (50.1) MB, ...` (and Mark-Compact, Mark-Sweep).
const TRACE_GC =
  /: (?:Scavenge|Mark-Compact|Mark-Sweep|Minor Mark-Sweep)[^\d]*([\d.]+) \([\d.]+\) -> ([\d.]+) \(/;

/**
 * Reads the runtime of a process started with the probe: `sample()` asks for the figures since the last
 * call (SIGUSR2) and adds the bytes freed by the collector in between.
 */
export class RuntimeMeter {
  readonly #process: BenchProcess;
  #freedMB = 0;
  #waiting: ((json: string) => void) | undefined;

  constructor(process: BenchProcess) {
    this.#process = process;
    process.onLine((line) => {
      const report = REPORT.exec(line);
      if (report) {
        this.#waiting?.(report[1] ?? '{}');
        this.#waiting = undefined;
        return;
      }
      const gc = TRACE_GC.exec(line);
      if (gc) this.#freedMB += Math.max(0, Number(gc[1]) - Number(gc[2]));
    });
  }

  /** The figures since the previous call; undefined when the process does not answer within a second. */
  async sample(): Promise<RuntimeSample | undefined> {
    const answer = new Promise<string | undefined>((resolve) => {
      const timer = setTimeout(() => resolve(undefined), 1000);
      this.#waiting = (json) => {
        clearTimeout(timer);
        resolve(json);
      };
    });
    this.#process.signal('SIGUSR2');
    const json = await answer;
    const freedBytes = this.#freedMB * 1024 * 1024;
    this.#freedMB = 0;
    if (json === undefined) return undefined;
    const report = JSON.parse(json) as Omit<RuntimeSample, 'freedBytes'>;
    return { ...report, freedBytes };
  }
}
