import { describe, expect, it } from 'vitest';
import type { BackendCluster } from '../../src/ir/route-table.ts';
import {
  createBalancerFactory,
  type LocalityBalancerFactory,
  mulberry32,
  type PickPolicy,
} from '../../src/lb/index.ts';
import { refreshBackends } from '../../src/mcs/backend-refresh.ts';
import { resolveServiceImportBackend } from '../../src/mcs/backends.ts';
import type { LocalIdentity } from '../../src/mcs/cluster-identity.ts';
import { backendPoolKeys, movedPoolKeys } from '../../src/proxy/compile/compile-backends.ts';
import type { AnyResource, Endpoint, EndpointSlice } from '../../src/snapshot/resources.ts';
import { Snapshot } from '../../src/snapshot/snapshot.ts';
import { FakeClock } from '../lb/fixtures.ts';
import { mcsSlice, serviceImport } from './fixtures.ts';

/**
 * Endpoint deltas end to end: a backend refreshed slice change after slice change (each collection starting
 * from the last, each balancer syncing its registry from the last, pool keys counted by what moved) must be
 * exactly what a from-scratch build of the same snapshot gives: endpoints, tiers, weights, warnings, the
 * balancer's endpoints, tiers and shares, its picks under the same random numbers, and the pools in use.
 */

const CLUSTERS = ['east', 'west', 'north', 'south', 'home'];
const ID = 'ServiceImport/shop/web:80';
const identity: LocalIdentity = { cluster: 'home', zone: 'z1', region: 'r1' };

type Variant = 'PreferSameZone' | 'Default' | 'policy' | 'weighted policy';

function policy(weighted: boolean): AnyResource {
  return {
    apiVersion: 'policy.clusterset-gateway.io/v1alpha1',
    kind: 'ClusterSelectionPolicy',
    metadata: { name: 'near', namespace: 'shop', creationTimestamp: '2026-01-01T00:00:00Z' },
    spec: {
      targetRefs: [{ group: 'multicluster.x-k8s.io', kind: 'ServiceImport', name: 'web' }],
      tiers: [
        weighted
          ? {
              name: 'pair',
              clusters: ['east', 'west'],
              clusterWeights: [
                { cluster: 'east', weight: 70 },
                { cluster: 'west', weight: 30 },
              ],
            }
          : { name: 'local', sameCluster: true },
        { name: 'north', clusters: ['north'] },
      ],
      fallback: weighted ? 'None' : 'Any',
    },
  } as unknown as AnyResource;
}

/** A random world of slices and the changes one member's EndpointSlice controller would make to it. */
class World {
  readonly random: () => number;
  readonly slices = new Map<string, EndpointSlice>();
  #names = 0;
  #addresses = 0;

  constructor(seed: number) {
    this.random = mulberry32(seed);
    for (let i = 0; i < 12; i++) this.addSlice();
  }

  #pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.random() * items.length)]!;
  }

  #endpoint(cluster: string): Endpoint {
    const roll = this.random();
    // Now and then an address another slice (maybe of another cluster) has too: a duplicate.
    const address =
      roll < 0.04 && this.slices.size > 0
        ? (this.#pick([...this.slices.values()]).endpoints?.[0]?.addresses[0] ?? '10.9.9.9')
        : `10.${CLUSTERS.indexOf(cluster)}.${Math.floor(this.#addresses / 200)}.${(this.#addresses++ % 200) + 1}`;
    const condition = this.random();
    return {
      addresses: [address],
      ...(this.random() < 0.9 ? { zone: this.#pick(['z1', 'z2', 'z3']) } : {}),
      ...(condition < 0.08
        ? { conditions: { ready: false, serving: true, terminating: true } }
        : condition < 0.12
          ? { conditions: { ready: false } }
          : {}),
    };
  }

  addSlice(): void {
    const cluster = this.#pick(CLUSTERS);
    const name = `web-${cluster}-${this.#names++}`;
    const count = Math.floor(this.random() * 9);
    this.slices.set(
      name,
      mcsSlice(
        'shop',
        name,
        'web',
        cluster,
        Array.from({ length: count }, () => this.#endpoint(cluster)),
      ),
    );
  }

  /** One to three changes, as one delta. */
  change(): void {
    const changes = 1 + Math.floor(this.random() * 3);
    for (let c = 0; c < changes; c++) {
      const roll = this.random();
      const names = [...this.slices.keys()];
      if (roll < 0.08 || names.length === 0) {
        this.addSlice();
        continue;
      }
      const name = this.#pick(names);
      const slice = this.slices.get(name)!;
      const cluster = slice.metadata.labels?.['multicluster.kubernetes.io/source-cluster'] ?? 'east';
      const endpoints = [...(slice.endpoints ?? [])];
      if (roll < 0.14) {
        this.slices.delete(name);
        continue;
      }
      if (roll < 0.2) {
        // Every endpoint not ready, then ready again: the serving-and-terminating fall-back comes and goes.
        for (let i = 0; i < endpoints.length; i++)
          endpoints[i] = { ...endpoints[i]!, conditions: { ready: this.random() < 0.3 } };
      } else if (roll < 0.3 || endpoints.length === 0) {
        endpoints.push(this.#endpoint(cluster));
      } else if (roll < 0.4) {
        endpoints.splice(Math.floor(this.random() * endpoints.length), 1);
      } else if (roll < 0.5) {
        const i = Math.floor(this.random() * endpoints.length);
        endpoints[i] = { ...endpoints[i]!, zone: this.#pick(['z1', 'z2', 'z3']) };
      } else {
        // The common change: one endpoint gets a new address (a pod replaced).
        endpoints[Math.floor(this.random() * endpoints.length)] = this.#endpoint(cluster);
      }
      this.slices.set(name, { ...slice, endpoints });
    }
  }

  snapshot(variant: Variant): Snapshot {
    const spec =
      variant === 'PreferSameZone' ? { trafficDistribution: 'PreferSameZone' as const } : ({} as const);
    const objects: AnyResource[] = [
      serviceImport('shop', 'web', { type: 'ClusterSetIP', ports: [{ name: 'http', port: 80 }], ...spec }),
      ...this.slices.values(),
    ];
    if (variant === 'policy' || variant === 'weighted policy') objects.push(policy(variant !== 'policy'));
    return new Snapshot(objects);
  }
}

function fromScratch(snapshot: Snapshot): { backend: BackendCluster; warnings: unknown[] } {
  const resolution = resolveServiceImportBackend(snapshot, 'shop', 'web', 80, identity);
  if (!resolution.ok) throw new Error(resolution.message);
  return { backend: resolution.backend, warnings: [...(resolution.warnings ?? [])] };
}

/** A factory whose random numbers can be restarted, so two balancers can be asked the same questions. */
function factory(policy: PickPolicy): { factory: LocalityBalancerFactory; restart(seed: number): void } {
  let random = mulberry32(0);
  return {
    factory: createBalancerFactory({ policy, clock: new FakeClock(), random: () => random() }),
    restart: (seed) => {
      random = mulberry32(seed);
    },
  };
}

function picks(balancer: ReturnType<LocalityBalancerFactory['build']>): (string | undefined)[] {
  return Array.from({ length: 40 }, () => balancer.pick()?.key);
}

function pools(backend: BackendCluster): Map<string, number> {
  const counts = new Map<string, number>();
  for (const key of backendPoolKeys(backend)) counts.set(key, (counts.get(key) ?? 0) + 1);
  return counts;
}

describe('endpoint deltas against a from-scratch build', () => {
  for (const variant of ['PreferSameZone', 'Default', 'policy', 'weighted policy'] as const) {
    for (const policy of ['p2c-peak-ewma', 'weighted-round-robin'] as const) {
      it(`${variant}, ${policy}: 150 random slice changes leave the same backend, balancer and pools`, () => {
        for (const seed of [1, 2, 3]) {
          const world = new World(seed * 7919 + variant.length);
          let backend = fromScratch(world.snapshot(variant)).backend;
          const live = factory(policy);
          const liveFactory = live.factory;
          let balancer = liveFactory.build(backend);
          const inUse = pools(backend);
          for (let step = 0; step < 150; step++) {
            world.change();
            const snapshot = world.snapshot(variant);
            const refresh = refreshBackends(snapshot, { [ID]: backend }, [ID], identity);
            expect(refresh.ok).toBe(true);
            if (!refresh.ok) return;
            const expected = fromScratch(snapshot);
            expect(refresh.warnings).toEqual(expected.warnings);
            const next = refresh.backends[0];
            if (next === undefined) {
              expect(backend).toEqual(expected.backend);
              continue;
            }
            expect(next).toEqual(expected.backend);
            for (const [key, delta] of movedPoolKeys(backend, next)) {
              const n = (inUse.get(key) ?? 0) + delta;
              if (n === 0) inUse.delete(key);
              else inUse.set(key, n);
            }
            expect(inUse).toEqual(pools(next));
            backend = next;
            balancer = liveFactory.build(backend);

            const scratch = factory(policy);
            const built = scratch.factory.build(expected.backend);
            expect(balancer.describe()).toEqual(built.describe());
            const sorted = (f: LocalityBalancerFactory) =>
              f
                .healthyEndpoints()
                .sort((a, b) => `${a.cluster}/${a.zone}`.localeCompare(`${b.cluster}/${b.zone}`));
            expect(sorted(liveFactory)).toEqual(sorted(scratch.factory));
            // Built afresh with the same random numbers, both balancers pick the same endpoints.
            live.restart(step);
            const again = liveFactory.build(backend);
            scratch.restart(step);
            const twin = scratch.factory.build(expected.backend);
            expect(picks(again)).toEqual(picks(twin));
          }
        }
      });
    }
  }
});
