/** Tracing as the command line sets it (`--otlp-endpoint` and the `--trace-*` flags; docs/tracing.md). */
export interface TracingOptions {
  /** The collector's OTLP/HTTP traces URL, e.g. http://collector:4318/v1/traces. */
  readonly endpoint: string;
  /** Of the traces the gateway starts itself, the share sampled (0..1); a caller's decision is always honoured. */
  readonly sampleRatio: number;
  /** The `service.name` resource attribute. */
  readonly serviceName: string;
  /** Sampled spans waiting for export at most; past it they are dropped and counted. */
  readonly queueSize: number;
  /** Spans per export request at most. */
  readonly batchSize: number;
  /** A batch goes out at the latest this long after its first span. */
  readonly batchDelayMs: number;
  /** One export request (retries included) gives up after this; its spans are dropped and counted. */
  readonly exportTimeoutMs: number;
}
