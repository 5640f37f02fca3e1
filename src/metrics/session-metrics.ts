import type { Counter, Registry } from 'prom-client';
import { registeredCounter } from './registered-metric.ts';

/** Session persistence (GEP-1619, docs/sessions.md): how pinned requests were served and the values ignored. */
export class SessionMetrics {
  readonly pins: Counter<'outcome'>;
  readonly ignored: Counter<'reason'>;

  constructor(registry: Registry) {
    this.pins = registeredCounter(registry, {
      name: 'clusterset_gateway_session_pins_total',
      help: 'Requests with session persistence by outcome: kept (the pinned endpoint), moved-endpoint (another endpoint of the pinned cluster), moved-cluster (another cluster), new (no usable value); all but kept set a new value.',
      labelNames: ['outcome'] as const,
    });
    this.ignored = registeredCounter(registry, {
      name: 'clusterset_gateway_session_values_ignored_total',
      help: 'Session values ignored (the request got a fresh pick), by reason: oversized, malformed, forged (no key makes its tag), expired, other-backend.',
      labelNames: ['reason'] as const,
    });
  }
}
