import type { MetricDefinition } from './metric-definition.ts';

/**
 * The data plane's request metrics. Labels stay low-cardinality: route is `namespace/name`, backend the
 * BackendCluster id, never a path. The proxy binds their series at compile time (proxy/compile/proxy-metrics.ts).
 */

export const LATENCY_BUCKETS_SECONDS: readonly number[] = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];

export const REQUESTS: MetricDefinition<'gateway' | 'route' | 'backend' | 'code'> = {
  name: 'clusterset_gateway_requests_total',
  help: 'Requests answered by the gateway, by gateway, route, backend and status code.',
  labelNames: ['gateway', 'route', 'backend', 'code'],
};

export const REQUEST_DURATION: MetricDefinition<'gateway' | 'route' | 'backend'> = {
  name: 'clusterset_gateway_request_duration_seconds',
  help: 'Time from request arrival to the end of the response, by gateway, route and backend.',
  labelNames: ['gateway', 'route', 'backend'],
};

export const UPSTREAM_REQUESTS: MetricDefinition<'backend' | 'cluster' | 'zone' | 'result'> = {
  name: 'clusterset_gateway_upstream_requests_total',
  help: 'Attempts sent to upstream endpoints, by backend, cluster, zone and result.',
  labelNames: ['backend', 'cluster', 'zone', 'result'],
};

export const UPSTREAM_REQUEST_DURATION: MetricDefinition<'backend' | 'cluster' | 'zone'> = {
  name: 'clusterset_gateway_upstream_request_duration_seconds',
  help: 'Time from dispatching an attempt to its end, by backend, cluster and zone.',
  labelNames: ['backend', 'cluster', 'zone'],
};

/** Counted (and logged, rate-limited) by net/bad-input.ts's BadInputReporter. */
export const REJECTED_REQUESTS: MetricDefinition<'reason'> = {
  name: 'clusterset_gateway_rejected_requests_total',
  help: 'Requests refused by the gateway before routing (malformed, over a limit, timed out), by reason.',
  labelNames: ['reason'],
};

/** Connections to the east-west listener refused before they became a request (proxy/listen/east-west-server.ts). */
export const EAST_WEST_REFUSED: MetricDefinition<'reason'> = {
  name: 'clusterset_gateway_east_west_refused_total',
  help: 'Connections to the east-west listener refused before a request (tls, not-http) and CONNECTs answered without a tunnel (connect-bad-authority, connect-unknown-service, connect-no-endpoint, connect-failed).',
  labelNames: ['reason'],
};
