import type { CliOptions } from '../cli/args.ts';
import type { startOtlpTracing } from '../trace/otlp-pipeline.ts';

export type StartTracing = typeof startOtlpTracing;

/**
 * The OTLP pipeline's constructor when tracing is on (`--otlp-endpoint`), else undefined: OpenTelemetry's SDK and
 * exporter are loaded only then, so a gateway without tracing neither loads nor holds them.
 */
export async function loadTracing(cli: CliOptions): Promise<StartTracing | undefined> {
  if (cli.tracing === undefined) return undefined;
  return (await import('../trace/otlp-pipeline.ts')).startOtlpTracing;
}
