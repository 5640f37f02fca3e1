import type { BackendCluster, UpstreamEndpoint } from '../ir/route-table.ts';
import { Deadline, TimerWheel } from '../net/timer-wheel.ts';
import { type HttpProbeTarget, httpProbe, type ProbeResult, type ProbeTarget, tcpProbe } from './probes.ts';

export interface HealthCheckOptions {
  /** Active checks on (the default) or off for every backend. */
  readonly enabled: boolean;
  /** Time between two probes of one endpoint. Default 2 s. */
  readonly intervalMs: number;
  /** A probe without an answer after this long fails. Default 1 s. */
  readonly timeoutMs: number;
  /** Each interval is stretched or shrunk at random by up to this percent, so probes do not bunch. Default 10. */
  readonly jitterPercent: number;
  /**
   * Probe budget of the process, per second; 0 = none. When every endpoint at its interval would exceed it,
   * endpoints whose last probe passed are probed less often (failing ones keep their interval, so recovery
   * stays as fast). Default 250 (a few % of a core, see bench/health-check-cost.bench.ts).
   */
  readonly maxProbesPerSecond: number;
}

export const DEFAULT_HEALTH_CHECK_OPTIONS: HealthCheckOptions = {
  enabled: true,
  intervalMs: 2_000,
  timeoutMs: 1_000,
  jitterPercent: 10,
  maxProbesPerSecond: 250,
};

/** Where results go: the balancers' health model, and a counter. */
export interface HealthCheckSink {
  result(backendIds: readonly string[], endpointKey: string, ok: boolean, kind: 'tcp' | 'http'): void;
  counted?(result: ProbeResult | 'skipped', kind: 'tcp' | 'http'): void;
  /**
   * Whether every backend of the endpoint saw it answer a request successfully within `withinMs`: then this
   * round's probe is skipped (the traffic was the probe) and counted as `skipped`.
   */
  servedRecently?(backendIds: readonly string[], endpointKey: string, withinMs: number): boolean;
}

/** Injected for tests: clock, random, the probes and the one interval timer. */
export interface HealthCheckRuntime {
  now(): number;
  random(): number;
  tcp(target: ProbeTarget): Promise<ProbeResult>;
  http(target: HttpProbeTarget): Promise<ProbeResult>;
  /**
   * Another network's gateway (an endpoint with a tunnel): its mutual-TLS handshake, proving the cluster it
   * stands for. Without it (no network identity configured) such endpoints get the TCP connect.
   */
  tunnel?(endpoint: UpstreamEndpoint, timeoutMs: number): Promise<ProbeResult>;
  every(ms: number, tick: () => void): { stop(): void };
}

// Coarse enough that probes due together start together (fewer event-loop wake-ups), fine enough to spread.
const TICK_MS = 100;
const SLOTS = 256;

interface Target {
  readonly id: string;
  readonly kind: 'tcp' | 'http';
  readonly endpointKey: string;
  readonly probe: HttpProbeTarget;
  /** Set for another network's gateway: probed by runtime.tunnel when there is one. */
  readonly tunnel: UpstreamEndpoint | undefined;
  readonly intervalMs: number;
  backends: string[];
  active: boolean;
  running: boolean;
  /** The last probe failed: keep the base interval whatever the budget. */
  failing: boolean;
  /** Its place on the wheel, made at its first scheduling and moved by each one after. */
  deadline: Deadline<Target> | undefined;
  startedMs: number;
}

export const defaultHealthCheckRuntime: HealthCheckRuntime = {
  now: () => performance.now(),
  random: Math.random,
  tcp: tcpProbe,
  http: httpProbe,
  every(ms, tick) {
    const timer = setInterval(tick, ms);
    timer.unref();
    return { stop: () => clearInterval(timer) };
  },
};

/**
 * Active health checks for every endpoint of every backend in the routing table (issue 10): a TCP connect by
 * default, an HTTP GET where the backend's annotations ask for it. One probe per distinct endpoint and check,
 * however many backends share it. Probes are spread over the interval (a new endpoint's first probe comes at
 * a random point of it) and scheduled on one timer wheel; nothing here runs on the request path. Results go to
 * the health model (src/lb), which owns thresholds and verdicts.
 */
export class HealthChecker {
  readonly #options: HealthCheckOptions;
  readonly #sink: HealthCheckSink;
  readonly #runtime: HealthCheckRuntime;
  readonly #wheel: TimerWheel;
  #targets = new Map<string, Target>();
  /** How much longer than its interval a passing endpoint waits, to stay within the probe budget. */
  #stretch = 1;
  #timer: { stop(): void } | undefined;

  constructor(
    options: HealthCheckOptions,
    sink: HealthCheckSink,
    runtime: HealthCheckRuntime = defaultHealthCheckRuntime,
  ) {
    this.#options = options;
    this.#sink = sink;
    this.#runtime = runtime;
    this.#wheel = new TimerWheel(TICK_MS, SLOTS, runtime.now());
  }

  /** The factor passing endpoints' intervals are stretched by to stay within the probe budget. */
  get stretch(): number {
    return this.#stretch;
  }

  /** Endpoints probed right now (distinct endpoint and check). */
  get targetCount(): number {
    return this.#targets.size;
  }

  /** Probes exactly the endpoints of `backends`; targets still present keep their schedule. */
  apply(backends: Readonly<Record<string, BackendCluster>>): void {
    const next = new Map<string, Target>();
    if (this.#options.enabled) {
      for (const backend of Object.values(backends)) this.#collect(backend, next);
    }
    let rate = 0;
    for (const target of next.values()) rate += 1_000 / target.intervalMs;
    const budget = this.#options.maxProbesPerSecond;
    this.#stretch = budget > 0 ? Math.max(1, rate / budget) : 1;
    const now = this.#runtime.now();
    for (const [id, target] of next) {
      const existing = this.#targets.get(id);
      if (existing !== undefined) {
        existing.backends = target.backends;
        next.set(id, existing);
      } else {
        // First probes are spread over the (stretched) interval, so a large new table never bursts.
        this.#schedule(target, now + this.#runtime.random() * target.intervalMs * this.#stretch);
      }
    }
    for (const [id, target] of this.#targets) if (!next.has(id)) target.active = false;
    this.#targets = next;
    if (next.size > 0 && this.#timer === undefined) {
      this.#timer = this.#runtime.every(TICK_MS, () => this.tick());
    } else if (next.size === 0 && this.#timer !== undefined) {
      this.#timer.stop();
      this.#timer = undefined;
    }
  }

  /**
   * An endpoint-only change of some backends: probes of endpoints they dropped stop (unless another backend
   * still names them), new endpoints get probes; every other target keeps its schedule. O(changed endpoints).
   */
  replaceBackends(
    changes: readonly { readonly previous: BackendCluster; readonly next: BackendCluster }[],
  ): void {
    if (!this.#options.enabled) return;
    const added = new Map<string, Target>();
    for (const { previous, next } of changes) {
      const before = new Map<string, Target>();
      this.#collect(previous, before);
      for (const id of before.keys()) {
        const target = this.#targets.get(id);
        if (target === undefined) continue;
        target.backends = target.backends.filter((b) => b !== previous.id);
        if (target.backends.length === 0) {
          target.active = false;
          this.#targets.delete(id);
        }
      }
      const after = new Map<string, Target>();
      this.#collect(next, after);
      for (const [id, target] of after) {
        const existing = this.#targets.get(id);
        if (existing !== undefined) {
          if (!existing.backends.includes(next.id)) existing.backends.push(next.id);
        } else {
          this.#targets.set(id, target);
          added.set(id, target);
        }
      }
    }
    let rate = 0;
    for (const target of this.#targets.values()) rate += 1_000 / target.intervalMs;
    const budget = this.#options.maxProbesPerSecond;
    this.#stretch = budget > 0 ? Math.max(1, rate / budget) : 1;
    const now = this.#runtime.now();
    for (const target of added.values())
      this.#schedule(target, now + this.#runtime.random() * target.intervalMs * this.#stretch);
    if (this.#targets.size > 0 && this.#timer === undefined) {
      this.#timer = this.#runtime.every(TICK_MS, () => this.tick());
    }
  }

  /** Starts the probes that are due. Called by the one interval timer (or a test's fake clock). */
  tick(): void {
    this.#wheel.advance(this.#runtime.now());
  }

  close(): void {
    this.#timer?.stop();
    this.#timer = undefined;
    for (const target of this.#targets.values()) target.active = false;
    this.#targets.clear();
  }

  #collect(backend: BackendCluster, into: Map<string, Target>): void {
    const config = backend.healthCheck;
    if (config?.disabled) return;
    const backendKind = config?.kind ?? 'tcp';
    const intervalMs = config?.intervalMs ?? this.#options.intervalMs;
    const timeoutMs = config?.timeoutMs ?? this.#options.timeoutMs;
    const path = config?.path ?? '/';
    const statusMin = config?.statusMin ?? 200;
    const statusMax = config?.statusMax ?? 399;
    const check =
      backendKind === 'http'
        ? `http|${path}|${config?.host ?? ''}|${statusMin}-${statusMax}|${intervalMs}|${timeoutMs}`
        : `tcp|${intervalMs}|${timeoutMs}`;
    for (const tier of backend.tiers) {
      for (const endpoint of tier) {
        // Another network's gateway answers only mutual TLS: its handshake is the probe, whatever the backend asks.
        const tunnel = endpoint.tunnel !== undefined;
        const kind = tunnel ? 'tcp' : backendKind;
        const id = `${endpoint.key}|${tunnel ? `tcp|${intervalMs}|${timeoutMs}` : check}`;
        const existing = into.get(id);
        if (existing !== undefined) {
          if (!existing.backends.includes(backend.id)) existing.backends.push(backend.id);
          continue;
        }
        into.set(id, {
          id,
          kind,
          endpointKey: endpoint.key,
          probe: {
            address: endpoint.address,
            port: endpoint.port,
            timeoutMs,
            path,
            host: config?.host,
            statusMin,
            statusMax,
          },
          tunnel: tunnel ? endpoint : undefined,
          intervalMs,
          backends: [backend.id],
          active: true,
          running: false,
          failing: false,
          deadline: undefined,
          startedMs: 0,
        });
      }
    }
  }

  #schedule(target: Target, dueMs: number): void {
    target.deadline ??= new Deadline(target, this.#fireTarget);
    const now = this.#runtime.now();
    this.#wheel.arm(target.deadline, now, dueMs - now);
  }

  #jittered(intervalMs: number): number {
    return intervalMs * (1 + (this.#options.jitterPercent / 100) * (this.#runtime.random() * 2 - 1));
  }

  readonly #fireTarget = (target: Target): void => this.#fire(target);

  #fire(target: Target): void {
    if (!target.active) return;
    const startMs = this.#runtime.now();
    const intervalMs = target.failing ? target.intervalMs : target.intervalMs * this.#stretch;
    this.#schedule(target, startMs + this.#jittered(intervalMs));
    // A probe still running (timeout longer than the interval) is not doubled up.
    if (target.running) return;
    if (!target.failing && this.#sink.servedRecently?.(target.backends, target.endpointKey, intervalMs)) {
      this.#sink.counted?.('skipped', target.kind);
      return;
    }
    target.running = true;
    target.startedMs = startMs;
    const probe = this.#probe(target);
    probe.then(
      (result) => this.#done(target, result),
      () => this.#done(target, 'local'),
    );
  }

  #probe(target: Target): Promise<ProbeResult> {
    const runtime = this.#runtime;
    if (target.tunnel !== undefined && runtime.tunnel !== undefined)
      return runtime.tunnel(target.tunnel, target.probe.timeoutMs);
    return target.kind === 'http' ? runtime.http(target.probe) : runtime.tcp(target.probe);
  }

  #done(target: Target, result: ProbeResult): void {
    target.running = false;
    if (!target.active) return;
    this.#sink.counted?.(result, target.kind);
    if (result === 'local') return;
    const failing = result !== 'success';
    // A first failure brings the next probe forward to the base interval, whatever the budget stretched.
    if (failing && !target.failing && this.#stretch > 1) {
      this.#schedule(target, target.startedMs + this.#jittered(target.intervalMs));
    }
    target.failing = failing;
    this.#sink.result(target.backends, target.endpointKey, result === 'success', target.kind);
  }
}
