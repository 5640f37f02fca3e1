import { Gauge, type Registry } from 'prom-client';
import type { MetricDefinition } from './metric-definition.ts';

/** Metrics of the file source (sources/file): what it refused in the manifests folder. */

/** Counted by the file source's BadInputReporter (net/bad-input.ts) when a problem is first seen. */
export const MANIFEST_PROBLEMS: MetricDefinition<'reason'> = {
  name: 'clusterset_gateway_manifest_problems_total',
  help: 'Problems found in manifest files (syntax, invalid or duplicate objects, limits), counted when first seen.',
  labelNames: ['reason'],
};

const gauges = new WeakMap<Registry, Gauge>();

/** clusterset_gateway_invalid_objects: objects the source refused at its last reload; one per registry. */
export function invalidObjectsGauge(registry: Registry): Gauge {
  let gauge = gauges.get(registry);
  if (!gauge) {
    gauge = new Gauge({
      name: 'clusterset_gateway_invalid_objects',
      help: 'Objects in the manifests folder refused by CRD validation at the last reload (their last valid version, if any, stays in effect).',
      registers: [registry],
    });
    gauges.set(registry, gauge);
  }
  return gauge;
}
