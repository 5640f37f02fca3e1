import { Counter, Gauge, type Registry } from 'prom-client';
import type { MetricDefinition } from './metric-definition.ts';

/** The registry's counter of this name, created on first use (several servers share one registry). */
export function registeredCounter<L extends string>(
  registry: Registry,
  definition: MetricDefinition<L>,
): Counter<L> {
  const existing = registry.getSingleMetric(definition.name);
  if (existing) return existing as Counter<L>;
  return new Counter({ ...definition, registers: [registry] });
}

/** The registry's gauge of this name, created on first use (several servers share one registry). */
export function registeredGauge<L extends string>(
  registry: Registry,
  definition: MetricDefinition<L>,
): Gauge<L> {
  const existing = registry.getSingleMetric(definition.name);
  if (existing) return existing as Gauge<L>;
  return new Gauge({ ...definition, registers: [registry] });
}
