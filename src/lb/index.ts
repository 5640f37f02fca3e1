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
  monotonicClock,
  type OutlierOptions,
  type PeakEwmaOptions,
  type PickPolicy,
  type RandomSource,
  resolveBalancerOptions,
} from './options.ts';
export { mulberry32 } from './seeded-random.ts';
export { computeTierShares, type TierHealth, type TierShares } from './tier-shares.ts';
