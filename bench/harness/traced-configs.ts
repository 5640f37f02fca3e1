import type { ConfigSpec } from './configs.ts';

/**
 * The gateway with tracing on (issue 46), exporting over OTLP/HTTP to a local sink: every request sampled
 * (the flag's default) and 1 % (what a busy gateway would run). Opt-in: `--config gateway-traced,...`.
 */
export const TRACED_CONFIGS = [
  { id: 'gateway-traced', sampleRatio: 1 },
  { id: 'gateway-traced-1pct', sampleRatio: 0.01 },
] as const;

/** The config names --config takes beyond the kinds. */
export const OPT_IN_CONFIG_IDS: readonly string[] = TRACED_CONFIGS.map((c) => c.id);

/** Each untraced `gateway` config followed by its traced twins, same manifests, measured only when named. */
export function withTracedVariants(configs: readonly ConfigSpec[]): ConfigSpec[] {
  return configs.flatMap((config) =>
    config.kind === 'gateway' && config.id === 'gateway' && !config.tracing
      ? [
          config,
          ...TRACED_CONFIGS.map(
            ({ id, sampleRatio }): ConfigSpec => ({
              ...config,
              id,
              label: `${config.label}, tracing on (ratio ${sampleRatio})`,
              tracing: { sampleRatio },
              optIn: true,
            }),
          ),
        ]
      : [config],
  );
}

/**
 * What `--config` selects: nothing listed means every config that is not opt-in; a kind selects that kind's
 * configs that are not opt-in; an id selects that config.
 */
export function isSelected(config: ConfigSpec, only: readonly string[] | undefined): boolean {
  if (!only || only.length === 0) return !config.optIn;
  return only.includes(config.id) || (!config.optIn && only.includes(config.kind));
}
