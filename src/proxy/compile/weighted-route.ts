import type { WeightedBackend } from '../../ir/route-table.ts';
import type { CompiledBackend } from './compile-backends.ts';

export interface WeightedTarget {
  /** Undefined for an invalid backendRef: its share of connections (or flows) is refused. */
  readonly backend: CompiledBackend | undefined;
  readonly cumulativeWeight: number;
}

/** A TCP, UDP or TLS route: its backendRefs as a weight table, compiled once per table. */
export interface WeightedRoute {
  readonly route: string;
  readonly targets: readonly WeightedTarget[];
  readonly totalWeight: number;
}

/** `backends` as a weight table; weight 0 takes no traffic and has no entry. */
export function compileWeightedRoute(
  route: string,
  backends: readonly WeightedBackend[],
  compiled: ReadonlyMap<string, CompiledBackend>,
): WeightedRoute {
  const targets: WeightedTarget[] = [];
  let total = 0;
  for (const weighted of backends) {
    if (weighted.weight <= 0) continue;
    total += weighted.weight;
    const target = weighted.target;
    targets.push({
      backend: target.kind === 'Backend' ? compiled.get(target.id) : undefined,
      cumulativeWeight: total,
    });
  }
  return { route, targets, totalWeight: total };
}

/** Weighted choice among a route's targets (GEP-1748 weights); `random` is in [0, 1). */
export function chooseTarget(route: WeightedRoute, random: number): WeightedTarget | undefined {
  if (route.totalWeight <= 0) return undefined;
  const point = random * route.totalWeight;
  return route.targets.find((t) => point < t.cumulativeWeight);
}
