import type { UpstreamEndpoint } from '../ir/route-table.ts';
import type { Balancer, BalancerFactory } from './balancer.ts';

export type { AttemptOutcome, AttemptResult, Balancer, BalancerFactory, BalancerState } from './balancer.ts';
export {
  createBalancerFactory,
  type HealthyEndpointCount,
  type LocalityBalancerFactory,
} from './balancer-factory.ts';
export type { EndpointHealth, HealthSignal } from './endpoint-state.ts';
export type { ProbeKind } from './health-registry.ts';
export type { LocalityBalancer } from './locality-balancer.ts';
export {
  BalancerConfigError,
  type BalancerObserver,
  type BalancerOptions,
  type BalancerOptionsInput,
  type Clock,
  DEFAULT_HEALTH_MODEL_OPTIONS,
  DEFAULT_OUTLIER_OPTIONS,
  DEFAULT_OVERPROVISIONING_FACTOR,
  DEFAULT_PANIC_THRESHOLD_PERCENT,
  DEFAULT_PEAK_EWMA_OPTIONS,
  type EjectEvent,
  type HealthChangeEvent,
  type HealthModelOptions,
  type OutlierOptions,
  type PeakEwmaOptions,
  type PickPolicy,
  type RandomSource,
  resolveBalancerOptions,
} from './options.ts';
export { mulberry32 } from './seeded-random.ts';
export { computeTierShares, type TierHealth, type TierShares } from './tier-shares.ts';

/**
 * Placeholder until src/lb lands its locality-aware factory: round-robin over the nearest non-empty tier.
 * Replaced by `createBalancerFactory(options)`; the proxy only depends on the BalancerFactory contract.
 */
export function createRoundRobinFactory(): BalancerFactory {
  return {
    build(cluster) {
      const endpoints: readonly UpstreamEndpoint[] = cluster.tiers.find((tier) => tier.length > 0) ?? [];
      let next = 0;
      const balancer: Balancer = {
        pick(tried) {
          for (let i = 0; i < endpoints.length; i++) {
            const endpoint = endpoints[(next + i) % endpoints.length]!;
            if (!tried?.has(endpoint.key)) {
              next = (next + i + 1) % endpoints.length;
              return endpoint;
            }
          }
          return undefined;
        },
        begin: () => () => {},
        describe: () => ({
          endpoints: endpoints.map((e) => ({ key: e.key, tier: 0, healthy: true, outstanding: 0 })),
          tierShares: [1],
        }),
      };
      return balancer;
    },
  };
}
