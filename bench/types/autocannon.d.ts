// autocannon ships no types; this declares the part of its programmatic API the bench uses.
declare module 'autocannon' {
  export interface AutocannonRequest {
    readonly method?: string;
    readonly path?: string;
    readonly headers?: Record<string, string>;
    readonly body?: string | Buffer;
  }

  export interface AutocannonOptions {
    readonly url: string;
    readonly connections?: number;
    readonly duration?: number;
    readonly timeout?: number;
    readonly pipelining?: number;
    readonly method?: string;
    readonly headers?: Record<string, string>;
    readonly body?: string | Buffer;
    readonly requests?: readonly AutocannonRequest[];
    /** SNI for an https url (the url's host name when it is not an IP address). */
    readonly servername?: string;
  }

  export interface Histogram {
    readonly average: number;
    readonly mean: number;
    readonly stddev: number;
    readonly min: number;
    readonly max: number;
    readonly total: number;
    readonly p50: number;
    readonly p90: number;
    readonly p99: number;
    readonly p99_9: number;
  }

  export interface AutocannonResult {
    readonly duration: number;
    readonly errors: number;
    readonly timeouts: number;
    readonly non2xx: number;
    readonly resets: number;
    readonly mismatches: number;
    readonly latency: Histogram;
    readonly requests: Histogram & { readonly sent: number };
    readonly throughput: Histogram;
    readonly statusCodeStats: Record<string, { readonly count: number }>;
  }

  export interface AutocannonInstance extends PromiseLike<AutocannonResult> {
    stop(): void;
    on(event: 'error', listener: (error: Error) => void): this;
  }

  export default function autocannon(options: AutocannonOptions): AutocannonInstance;
}
