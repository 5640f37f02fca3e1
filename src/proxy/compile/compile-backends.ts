import { isDeepStrictEqual } from 'node:util';
import { tierWindows } from '../../ir/changed-window.ts';
import type { BackendCluster, BackendProtocol, UpstreamEndpoint } from '../../ir/route-table.ts';
import { runAllSteps, type Steps } from '../../ir/steps.ts';
import type { Balancer, BalancerFactory } from '../../lb/balancer.ts';
import { poolKey, tlsIdentity } from './pool-key.ts';
import type { ProxyMetrics, UpstreamSeries } from './proxy-metrics.ts';
import { RetryBudget, type RetryBudgetConfig } from './retry-budget.ts';

export interface CompiledBackend {
  readonly id: string;
  /**
   * The two fields an endpoint-only change replaces in place (ProxyServer.applyEndpoints): compiled routes hold
   * this object and read them per request, so no route is recompiled.
   */
  cluster: BackendCluster;
  readonly protocol: BackendProtocol;
  balancer: Balancer;
  /** Retries in flight against requests in flight, for this backend (kept while the backend is unchanged). */
  readonly retryBudget: RetryBudget;
  upstreamSeries(endpoint: UpstreamEndpoint): UpstreamSeries;
}

export interface BackendDeps {
  readonly balancers: BalancerFactory;
  readonly metrics: ProxyMetrics;
  /** The retry budget of a backend no XBackendTrafficPolicy sets one for. Default: Envoy's 20 %, at least 10. */
  readonly retryBudget?: RetryBudgetConfig;
}

export const DEFAULT_RETRY_BUDGET: RetryBudgetConfig = { percent: 20, minConcurrency: 10, source: 'flags' };

export interface CompiledBackends {
  readonly backends: ReadonlyMap<string, CompiledBackend>;
  /** Pool keys of every endpoint the table can send to; other pools may be closed. */
  readonly poolKeys: ReadonlySet<string>;
}

/**
 * A balancer and lazily created metric series per BackendCluster, and the pool keys of their endpoints. A
 * backend equal to one of `previous` (the table in force) keeps its compiled form, balancer state included: a
 * route change in a table of 10,000 backends builds one balancer, not 10,000.
 */
export function compileBackends(
  clusters: readonly BackendCluster[],
  deps: BackendDeps,
  previous?: ReadonlyMap<string, CompiledBackend>,
): CompiledBackends {
  return runAllSteps(compileBackendsInSteps(clusters, deps, previous));
}

/** compileBackends as steps (ir/steps.ts): a pause is possible after each backend. */
export function* compileBackendsInSteps(
  clusters: readonly BackendCluster[],
  deps: BackendDeps,
  previous?: ReadonlyMap<string, CompiledBackend>,
): Steps<CompiledBackends> {
  const backends = new Map<string, CompiledBackend>();
  const poolKeys = new Set<string>();
  for (const cluster of clusters) {
    const kept = previous?.get(cluster.id);
    const same = kept !== undefined && (kept.cluster === cluster || isDeepStrictEqual(kept.cluster, cluster));
    backends.set(cluster.id, same ? kept : compileBackend(cluster, deps));
    for (const key of backendPoolKeys(cluster)) poolKeys.add(key);
    yield;
  }
  return { backends, poolKeys };
}

/** The pool key of every endpoint of one backend. */
export function backendPoolKeys(cluster: BackendCluster): string[] {
  const keys: string[] = [];
  for (const tier of cluster.tiers)
    for (const endpoint of tier) keys.push(poolKey(cluster.protocol, endpoint, cluster.tls));
  return keys;
}

function compileBackend(cluster: BackendCluster, deps: BackendDeps): CompiledBackend {
  const series = new Map<string, UpstreamSeries>();
  return {
    id: cluster.id,
    cluster,
    protocol: cluster.protocol,
    balancer: deps.balancers.build(cluster),
    retryBudget: new RetryBudget(
      cluster.retryBudget !== undefined
        ? {
            percent: cluster.retryBudget.percent,
            minConcurrency: cluster.retryBudget.minConcurrency,
            source: `XBackendTrafficPolicy/${cluster.retryBudget.policy}`,
          }
        : (deps.retryBudget ?? DEFAULT_RETRY_BUDGET),
    ),
    upstreamSeries(endpoint) {
      let s = series.get(endpoint.key);
      if (s === undefined) {
        s = deps.metrics.upstreamSeries(cluster.id, endpoint.cluster, endpoint.zone ?? '');
        series.set(endpoint.key, s);
      }
      return s;
    },
  };
}

/**
 * How many more (or fewer) times each pool key is named after `before` is replaced by `after`. Endpoints that
 * are the same objects in both (every one a change did not touch: mcs keeps them) name the same pool when the
 * protocol and TLS identity are the same, and are not looked at further: O(changed) plus pointer compares.
 */
export function movedPoolKeys(before: BackendCluster, after: BackendCluster): Map<string, number> {
  const moved = new Map<string, number>();
  const add = (key: string, delta: number): void => {
    moved.set(key, (moved.get(key) ?? 0) + delta);
  };
  const sameKeys =
    before.protocol === after.protocol &&
    (before.tls === undefined
      ? after.tls === undefined
      : after.tls !== undefined && tlsIdentity(before.tls) === tlsIdentity(after.tls));
  if (!sameKeys) {
    for (const key of backendPoolKeys(after)) add(key, 1);
    for (const key of backendPoolKeys(before)) add(key, -1);
    return moved;
  }
  // Per tier, only the window where the endpoint objects differ: the rest name the same pools.
  const windows = tierWindows(before.tiers, after.tiers);
  const kept = new Map<UpstreamEndpoint, number>();
  windows.forEach((window, t) => {
    const tier = before.tiers[t] ?? [];
    for (let i = window.start; i < window.beforeEnd; i++) {
      const endpoint = tier[i]!;
      kept.set(endpoint, (kept.get(endpoint) ?? 0) + 1);
    }
  });
  windows.forEach((window, t) => {
    const tier = after.tiers[t] ?? [];
    for (let i = window.start; i < window.afterEnd; i++) {
      const endpoint = tier[i]!;
      const count = kept.get(endpoint);
      if (count === undefined) add(poolKey(after.protocol, endpoint, after.tls), 1);
      else if (count === 1) kept.delete(endpoint);
      else kept.set(endpoint, count - 1);
    }
  });
  for (const [endpoint, count] of kept) add(poolKey(before.protocol, endpoint, before.tls), -count);
  return moved;
}
