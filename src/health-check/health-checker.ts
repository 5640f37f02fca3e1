import type { BackendCluster } from '../ir/route-table.ts';
import { type HttpProbeTarget, httpProbe, type ProbeResult, type ProbeTarget, tcpProbe } from './probes.ts';
import { TimerWheel } from './timer-wheel.ts';

export interface HealthCheckOptions {
  /** Active checks on (the default) or off for every backend. */
  readonly enabled: boolean;
  /** Time between two probes of one endpoint. Default 2 s. */
  readonly intervalMs: number;
  /** A probe without an answer after this long fails. Default 1 s. */
  readonly timeoutMs: number;
  /** Each interval is stretched or shrunk at random by up to this percent, so probes do not bunch. Default 10. */
  readonly jitterPercent: number;
}

export const DEFAULT_HEALTH_CHECK_OPTIONS: HealthCheckOptions = {
  enabled: true,
  intervalMs: 2_000,
  timeoutMs: 1_000,
  jitterPercent: 10,
};

/** Where results go: the balancers' health model, and a counter. */
export interface HealthCheckSink {
  result(backendIds: readonly string[], endpointKey: string, ok: boolean, kind: 'tcp' | 'http'): void;
  counted?(result: ProbeResult, kind: 'tcp' | 'http'): void;
}

/** Injected for tests: clock, random, the probes and the one interval timer. */
export interface HealthCheckRuntime {
  now(): number;
  random(): number;
  tcp(target: ProbeTarget): Promise<ProbeResult>;
  http(target: HttpProbeTarget): Promise<ProbeResult>;
  every(ms: number, tick: () => void): { stop(): void };
}

const TICK_MS = 25;
const SLOTS = 256;

interface Target {
  readonly id: string;
  readonly kind: 'tcp' | 'http';
  readonly endpointKey: string;
  readonly probe: HttpProbeTarget;
  readonly intervalMs: number;
  backends: string[];
  active: boolean;
  running: boolean;
}

const realRuntime: HealthCheckRuntime = {
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
  readonly #wheel: TimerWheel<Target>;
  #targets = new Map<string, Target>();
  #timer: { stop(): void } | undefined;

  constructor(options: HealthCheckOptions, sink: HealthCheckSink, runtime: HealthCheckRuntime = realRuntime) {
    this.#options = options;
    this.#sink = sink;
    this.#runtime = runtime;
    this.#wheel = new TimerWheel<Target>(TICK_MS, SLOTS, runtime.now());
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
    const now = this.#runtime.now();
    for (const [id, target] of next) {
      const existing = this.#targets.get(id);
      if (existing !== undefined) {
        existing.backends = target.backends;
        next.set(id, existing);
      } else {
        this.#wheel.schedule(target, now + this.#runtime.random() * target.intervalMs);
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

  /** Starts the probes that are due. Called by the one interval timer (or a test's fake clock). */
  tick(): void {
    this.#wheel.advance(this.#runtime.now(), (target) => this.#fire(target));
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
    const kind = config?.kind ?? 'tcp';
    const intervalMs = config?.intervalMs ?? this.#options.intervalMs;
    const timeoutMs = config?.timeoutMs ?? this.#options.timeoutMs;
    const path = config?.path ?? '/';
    const statusMin = config?.statusMin ?? 200;
    const statusMax = config?.statusMax ?? 399;
    const check =
      kind === 'http'
        ? `http|${path}|${config?.host ?? ''}|${statusMin}-${statusMax}|${intervalMs}|${timeoutMs}`
        : `tcp|${intervalMs}|${timeoutMs}`;
    for (const tier of backend.tiers) {
      for (const endpoint of tier) {
        const id = `${endpoint.key}|${check}`;
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
          intervalMs,
          backends: [backend.id],
          active: true,
          running: false,
        });
      }
    }
  }

  #fire(target: Target): void {
    if (!target.active) return;
    const startMs = this.#runtime.now();
    const jitter = (this.#options.jitterPercent / 100) * (this.#runtime.random() * 2 - 1);
    this.#wheel.schedule(target, startMs + target.intervalMs * (1 + jitter));
    // A probe still running (timeout longer than the interval) is not doubled up.
    if (target.running) return;
    target.running = true;
    const probe = target.kind === 'http' ? this.#runtime.http(target.probe) : this.#runtime.tcp(target.probe);
    probe.then(
      (result) => this.#done(target, result),
      () => this.#done(target, 'local'),
    );
  }

  #done(target: Target, result: ProbeResult): void {
    target.running = false;
    if (!target.active) return;
    this.#sink.counted?.(result, target.kind);
    if (result === 'local') return;
    this.#sink.result(target.backends, target.endpointKey, result === 'success', target.kind);
  }
}
