import type { BackendCluster } from '../ir/route-table.ts';
import type { BalancerFactory } from './balancer.ts';
import { HealthRegistry, type ProbeKind } from './health-registry.ts';
import { LocalityBalancer } from './locality-balancer.ts';
import { type BalancerOptions, type BalancerOptionsInput, resolveBalancerOptions } from './options.ts';

/** Healthy endpoints of one backend in one source cluster and zone, for a gauge. */
export interface HealthyEndpointCount {
  /** `BackendCluster.id`. */
  readonly backend: string;
  readonly cluster: string;
  /** Empty when the endpoint has no zone. */
  readonly zone: string;
  readonly healthy: number;
  readonly total: number;
}

export interface LocalityBalancerFactory extends BalancerFactory {
  build(cluster: BackendCluster): LocalityBalancer;
  readonly options: BalancerOptions;
  /** Healthy (by the health model) endpoint counts per backend, cluster and zone; O(endpoints), for metric scrapes. */
  healthyEndpoints(): HealthyEndpointCount[];
  /** One active health check result for an endpoint of a backend (src/health-check reports here). */
  recordProbe(backend: string, endpointKey: string, ok: boolean, kind: ProbeKind): void;
  /** Healthy, not avoided, and served a request successfully within `withinMs` (the next probe can be skipped). */
  servedRecently(backend: string, endpointKey: string, withinMs: number): boolean;
  /** Forgets the state of backends not in `backendIds` (call after swapping in a new routing table). */
  retain(backendIds: Iterable<string>): void;
}

/**
 * The locality-aware balancer factory (issue 3): Envoy-style tier shares with overprovisioning and panic,
 * P2C over peak-EWMA or weighted round-robin inside a tier, passive outlier detection. Health and load live in
 * one registry per backend id, shared by every balancer built for that id, so rebuilding keeps them.
 */
export function createBalancerFactory(input: BalancerOptionsInput = {}): LocalityBalancerFactory {
  const options = resolveBalancerOptions(input);
  const registries = new Map<string, HealthRegistry>();
  return {
    options,
    build(cluster) {
      let registry = registries.get(cluster.id);
      if (registry === undefined) {
        registry = new HealthRegistry(cluster.id, options);
        registries.set(cluster.id, registry);
      }
      return new LocalityBalancer(cluster, registry, options);
    },
    healthyEndpoints() {
      const counts: HealthyEndpointCount[] = [];
      for (const registry of registries.values()) {
        const byLocality = new Map<
          string,
          { cluster: string; zone: string; healthy: number; total: number }
        >();
        for (const state of registry.states()) {
          const zone = state.endpoint.zone ?? '';
          const id = `${state.endpoint.cluster}\u0000${zone}`;
          let entry = byLocality.get(id);
          if (entry === undefined) {
            entry = { cluster: state.endpoint.cluster, zone, healthy: 0, total: 0 };
            byLocality.set(id, entry);
          }
          entry.total++;
          if (state.health === 'healthy') entry.healthy++;
        }
        for (const entry of byLocality.values()) counts.push({ backend: registry.backend, ...entry });
      }
      return counts;
    },
    recordProbe(backend, endpointKey, ok, kind) {
      registries.get(backend)?.recordProbe(endpointKey, ok, kind, options.clock.now());
    },
    servedRecently(backend, endpointKey, withinMs) {
      return registries.get(backend)?.servedRecently(endpointKey, withinMs, options.clock.now()) ?? false;
    },
    retain(backendIds) {
      const keep = new Set(backendIds);
      for (const id of registries.keys()) if (!keep.has(id)) registries.delete(id);
    },
  };
}
