import type { RecordableHistogram } from 'node:perf_hooks';

/** What a load generator is asked to do and what it reports, the same for autocannon, wrk and the gRPC client. */
export interface LoadTarget {
  readonly host: string;
  readonly path: string;
}

export interface LoadSpec {
  /** `http://127.0.0.1:<port>`, or `https://...` for the TLS rows (certificates are not verified). */
  readonly origin: string;
  /** The SNI an `https` origin is dialled with. */
  readonly serverName?: string;
  readonly method: 'GET' | 'POST';
  /** Requests cycle through these Host/path pairs. */
  readonly targets: readonly LoadTarget[];
  readonly bodyBytes?: number;
  readonly connections: number;
  /** gRPC: calls in flight on each HTTP/2 connection at all times. */
  readonly streamsPerConnection?: number;
  readonly durationSec: number;
  /**
   * wrk only: number every request and time it in wrk's Lua script (LoadResult.perRequestLatencyMs). The
   * hooks cost wrk about 4 us of CPU per request on the core it shares with the backend, so the suite does
   * this in a pass of its own, after the measured runs.
   */
  readonly perRequestLatency?: boolean;
  /** wrk runs on these CPUs (taskset) instead of the runner's; for scenarios that unpin everything. */
  readonly cpus?: string;
}

/**
 * `grpc`: the h2c unary-call client of bench/harness/grpc-load.ts (requests are calls); `tls-new`,
 * `tls-resumed`: one request per TLS connection, full or resumed handshakes (bench/harness/handshake-load.ts);
 * `h2load`: HTTP/2 over TLS, streams multiplexed on each connection (bench/harness/h2load-load.ts).
 */
export type LoadTool = 'autocannon' | 'wrk' | 'grpc' | 'tls-new' | 'tls-resumed' | 'h2load';

export interface LoadResult {
  readonly tool: LoadTool;
  readonly requests: number;
  readonly durationSec: number;
  readonly rps: number;
  readonly latencyMs: {
    readonly p50: number;
    readonly p99: number;
    readonly p999: number;
    readonly max: number;
    readonly mean: number;
  };
  /**
   * wrk only: its own per-request times (request written to answer read), without the coordinated-omission
   * correction wrk 4.1 applies to `latencyMs` (a slow request there also adds samples at itself minus 1, 2, ...
   * expected intervals). From a log-linear histogram in wrk's Lua script (3 significant figures);
   * `requests` is how many answers it paired with their request.
   */
  readonly perRequestLatencyMs?: {
    readonly p50: number;
    readonly p99: number;
    readonly p999: number;
    readonly max: number;
    readonly requests: number;
  };
  /** Connection errors, read/write errors and timeouts (gRPC: streams reset or cut). */
  readonly errors: number;
  /** HTTP status outside 2xx (gRPC: a grpc-status other than OK). */
  readonly non2xx: number;
  /** Bytes the load generator read (response heads and bodies), where it counts them: the MB/s column. */
  readonly bytesRead?: number;
}

/** Smallest latency step each tool records: autocannon's histogram counts whole milliseconds. */
export const LATENCY_RESOLUTION_MS: Readonly<Record<LoadTool, number>> = {
  autocannon: 1,
  wrk: 0.001,
  grpc: 0.001,
  'tls-new': 0.001,
  'tls-resumed': 0.001,
  h2load: 0.001,
};

/** The result of a closed-loop Node load generator that records nanoseconds per request in `histogram`. */
export function resultFromNanoseconds(
  tool: LoadTool,
  counts: { readonly answered: number; readonly errors: number; readonly non2xx: number },
  durationSec: number,
  histogram: RecordableHistogram,
): LoadResult {
  const ms = (ns: number): number => ns / 1e6;
  return {
    tool,
    requests: counts.answered,
    durationSec,
    rps: durationSec > 0 ? counts.answered / durationSec : 0,
    latencyMs: {
      p50: ms(histogram.percentile(50)),
      p99: ms(histogram.percentile(99)),
      p999: ms(histogram.percentile(99.9)),
      max: ms(histogram.max),
      mean: ms(histogram.mean),
    },
    errors: counts.errors,
    non2xx: counts.non2xx,
  };
}
