import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { RouteTable } from '../ir/route-table.ts';
import type { BalancerState } from '../lb/index.ts';
import type { LocalIdentity } from '../mcs/cluster-identity.ts';
import { localClusterName } from '../mcs/cluster-identity.ts';
import { type LocalityLabels, registerLocalityInfo } from '../metrics/locality-metrics.ts';
import type { NetworksReport } from './network-report.ts';
import { ServedWindow } from './served-window.ts';
import { buildTopology } from './topology-builder.ts';
import type { MemberConnectionView } from './topology-model.ts';

/** What the topology reads; all of it already exists for /config_dump. */
export interface TopologySource {
  table(): RouteTable | undefined;
  /**
   * The balancers' states; with --workers, asked of the worker that probes (a promise). Undefined: none to show.
   */
  balancers():
    | Readonly<Record<string, BalancerState>>
    | Promise<Readonly<Record<string, BalancerState>>>
    | undefined;
  identity(): LocalIdentity;
  notes(): readonly string[];
  /** Fleet mode only: every member cluster's connection state. */
  members?(): readonly MemberConnectionView[];
  /** Multi-network: networks, their clusters and gateways (the /config_dump section). */
  networks?(): NetworksReport | undefined;
}

export interface TopologyLimits {
  /** Endpoints listed one by one per node box; beyond it the box shows counts. Default 50. */
  readonly endpointListLimit: number;
  /** Live streams open at once; more get 503. Default 16. */
  readonly maxStreams: number;
  /** Bytes a stream may have queued (a client not reading); beyond it frames are skipped. Default 1 MiB. */
  readonly maxStreamBufferBytes: number;
  /** A stream is ended after this long; EventSource reconnects on its own. Default 30 min. */
  readonly maxStreamLifetimeMs: number;
}

export const DEFAULT_TOPOLOGY_LIMITS: TopologyLimits = {
  endpointListLimit: 50,
  maxStreams: 16,
  maxStreamBufferBytes: 1 << 20,
  maxStreamLifetimeMs: 30 * 60_000,
};

/** Frames skipped in a row (the client reads nothing) before the stream is cut. */
const MAX_SKIPPED_FRAMES = 30;

interface Stream {
  readonly res: ServerResponse;
  readonly openedAtMs: number;
  skipped: number;
}

/**
 * Builds the topology document off the request path: a 1 s tick reads the proxy's counters (cheap), and
 * builds and sends the document only while someone looks (a live stream, or an API call, cached for the tick).
 */
export class TopologyService {
  readonly #source: TopologySource;
  readonly #limits: TopologyLimits;
  readonly #logger: Logger;
  readonly #window: ServedWindow;
  readonly #intervalMs: number;
  readonly #streams = new Set<Stream>();
  #timer: NodeJS.Timeout | undefined;
  #cached: { readonly atMs: number; readonly json: string } | undefined;
  /** The document being built (the balancers may be another process's): callers meanwhile share it. */
  #building: Promise<string> | undefined;

  constructor(
    source: TopologySource,
    registry: Registry,
    logger: Logger,
    limits: Partial<TopologyLimits> = {},
    intervalMs = 1000,
  ) {
    this.#source = source;
    this.#limits = { ...DEFAULT_TOPOLOGY_LIMITS, ...limits };
    this.#logger = logger.child({ component: 'topology' });
    this.#window = new ServedWindow(registry);
    this.#intervalMs = intervalMs;
    registerLocalityInfo(registry, () => localityLabels(source));
  }

  start(): void {
    if (this.#timer) return;
    void this.#tick();
    this.#timer = setInterval(() => void this.#tick(), this.#intervalMs);
    this.#timer.unref();
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    for (const stream of this.#streams) stream.res.end();
    this.#streams.clear();
  }

  get streamCount(): number {
    return this.#streams.size;
  }

  /** The document as JSON, built at most once per tick however many ask. */
  json(): Promise<string> {
    return this.#document(this.#intervalMs);
  }

  /** The cached document while younger than `maxAgeMs`, else a new one. */
  #document(maxAgeMs: number): Promise<string> {
    if (this.#cached && Date.now() - this.#cached.atMs < maxAgeMs) return Promise.resolve(this.#cached.json);
    this.#building ??= this.#build().finally(() => {
      this.#building = undefined;
    });
    return this.#building;
  }

  async #build(): Promise<string> {
    const source = this.#source;
    const balancers = await source.balancers();
    const now = Date.now();
    const { counts, seconds } = this.#window.delta();
    const json = JSON.stringify(
      buildTopology({
        table: source.table(),
        balancers,
        identity: source.identity(),
        served: counts,
        windowSeconds: Math.round(seconds * 10) / 10,
        nowMs: now,
        endpointListLimit: this.#limits.endpointListLimit,
        notes: source.notes(),
        members: source.members?.(),
        networks: source.networks?.(),
      }),
    );
    this.#cached = { atMs: now, json };
    return json;
  }

  /** Serves `text/event-stream`: one `data:` frame per tick with the whole document. */
  async openStream(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (this.#streams.size >= this.#limits.maxStreams) {
      const body = `too many live topology streams (${this.#limits.maxStreams}); poll /api/topology instead\n`;
      res.writeHead(503, { 'content-type': 'text/plain; charset=utf-8', 'retry-after': '5' }).end(body);
      return;
    }
    const stream: Stream = { res, openedAtMs: Date.now(), skipped: 0 };
    this.#streams.add(stream);
    req.socket.setNoDelay(true);
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      'x-accel-buffering': 'no',
    });
    res.write(`retry: ${this.#intervalMs}\n\n`);
    const forget = () => this.#streams.delete(stream);
    res.once('close', forget);
    res.once('error', forget);
    const first = await this.json();
    if (this.#streams.has(stream)) this.#send(stream, `data: ${first}\n\n`);
  }

  async #tick(): Promise<void> {
    try {
      await this.#window.sample(Date.now());
      if (this.#streams.size === 0) return;
      // Fresh each tick (the 10% absorbs timer jitter), unless an API call just built one: at most one per tick.
      const frame = `data: ${await this.#document(this.#intervalMs * 0.9)}\n\n`;
      const now = Date.now();
      for (const stream of this.#streams) {
        if (now - stream.openedAtMs > this.#limits.maxStreamLifetimeMs) {
          this.#streams.delete(stream);
          stream.res.end();
          continue;
        }
        this.#send(stream, frame);
      }
    } catch (error) {
      this.#logger.warn({ err: error }, 'topology update failed');
    }
  }

  #send(stream: Stream, frame: string): void {
    const queued = stream.res.writableLength;
    if (queued > 0 && queued + frame.length > this.#limits.maxStreamBufferBytes) {
      stream.skipped++;
      if (stream.skipped > MAX_SKIPPED_FRAMES) {
        this.#logger.info('cutting a topology stream whose client stopped reading');
        this.#streams.delete(stream);
        stream.res.destroy();
      }
      return;
    }
    stream.skipped = 0;
    stream.res.write(frame);
  }
}

/** This gateway's locality as the locality info metric labels it. */
function localityLabels(source: TopologySource): LocalityLabels {
  const identity = source.identity();
  return {
    cluster: localClusterName(identity),
    zone: identity.zone ?? '',
    region: identity.region ?? '',
    node: identity.node ?? '',
  };
}
