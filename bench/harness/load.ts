/** What a load generator is asked to do and what it reports, the same for autocannon and wrk. */
export interface LoadTarget {
  readonly host: string;
  readonly path: string;
}

export interface LoadSpec {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  readonly method: 'GET' | 'POST';
  /** Requests cycle through these Host/path pairs. */
  readonly targets: readonly LoadTarget[];
  readonly bodyBytes?: number;
  readonly connections: number;
  readonly durationSec: number;
}

export type LoadTool = 'autocannon' | 'wrk';

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
  /** Connection errors, read/write errors and timeouts. */
  readonly errors: number;
  readonly non2xx: number;
}

/** Smallest latency step each tool records: autocannon's histogram counts whole milliseconds. */
export const LATENCY_RESOLUTION_MS: Readonly<Record<LoadTool, number>> = { autocannon: 1, wrk: 0.001 };
