import { Counter, Gauge, type Registry } from 'prom-client';
import type { MetricDefinition } from './metric-definition.ts';

/** Metrics of fleet mode (src/fleet): members by connection state, member ServiceExports by outcome. */

export const FLEET_MEMBERS: MetricDefinition<'state'> = {
  name: 'clusterset_gateway_fleet_members',
  help: 'Member clusters by connection state (connecting, synced, stale, error, refused).',
  labelNames: ['state'],
};

export const FLEET_SERVICE_EXPORTS: MetricDefinition<'state'> = {
  name: 'clusterset_gateway_fleet_service_exports',
  help: "Members' ServiceExports by outcome: exported (Valid, no conflict), conflict (Valid, Conflict=True: the oldest export's values win), invalid (no Service, or ExternalName).",
  labelNames: ['state'],
};

const MEMBER_STATES = ['connecting', 'synced', 'stale', 'error', 'refused'] as const;
const EXPORT_STATES = ['exported', 'conflict', 'invalid'] as const;

/** What the fleet source reports after each combination; the gauges are bound once per registry. */
export interface FleetMetrics {
  observe(
    members: readonly { readonly state: string }[],
    derivation: {
      readonly exports: readonly {
        readonly conditions: readonly { readonly type: string; readonly status: string }[];
      }[];
    },
  ): void;
}

const bound = new WeakMap<Registry, FleetMetrics>();

export function fleetMetrics(registry: Registry): FleetMetrics {
  let metrics = bound.get(registry);
  if (metrics) return metrics;
  const members = new Gauge({
    ...FLEET_MEMBERS,
    labelNames: [...FLEET_MEMBERS.labelNames],
    registers: [registry],
  });
  const exports = new Gauge({
    ...FLEET_SERVICE_EXPORTS,
    labelNames: [...FLEET_SERVICE_EXPORTS.labelNames],
    registers: [registry],
  });
  for (const state of MEMBER_STATES) members.set({ state }, 0);
  for (const state of EXPORT_STATES) exports.set({ state }, 0);
  metrics = {
    observe(memberList, derivation) {
      const byState = new Map<string, number>(MEMBER_STATES.map((s) => [s, 0]));
      for (const m of memberList) byState.set(m.state, (byState.get(m.state) ?? 0) + 1);
      for (const [state, n] of byState) members.set({ state }, n);
      const outcomes = new Map<string, number>(EXPORT_STATES.map((s) => [s, 0]));
      for (const exp of derivation.exports) {
        const valid = exp.conditions.some((c) => c.type === 'Valid' && c.status === 'True');
        const conflict = exp.conditions.some((c) => c.type === 'Conflict' && c.status === 'True');
        const state = !valid ? 'invalid' : conflict ? 'conflict' : 'exported';
        outcomes.set(state, (outcomes.get(state) ?? 0) + 1);
      }
      for (const [state, n] of outcomes) exports.set({ state }, n);
    },
  };
  bound.set(registry, metrics);
  return metrics;
}

export const FLEET_WATCH_ERRORS: MetricDefinition<'cluster'> = {
  name: 'clusterset_gateway_fleet_watch_errors_total',
  help: "Failed discovery, list or watch requests to a member cluster's API server (unreachable, refused credentials, a failing exec plugin, garbage), by member.",
  labelNames: ['cluster'],
};

const watchErrors = new WeakMap<Registry, Counter<'cluster'>>();

/** Counts one failed request to a member's API server; bound once per registry. */
export function fleetWatchErrors(registry: Registry): (cluster: string) => void {
  let counter = watchErrors.get(registry);
  if (!counter) {
    counter = new Counter({
      ...FLEET_WATCH_ERRORS,
      labelNames: [...FLEET_WATCH_ERRORS.labelNames],
      registers: [registry],
    });
    watchErrors.set(registry, counter);
  }
  const bound = counter;
  return (cluster) => bound.inc({ cluster });
}
