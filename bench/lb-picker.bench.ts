/**
 * Picker micro benchmark (issue 3): ns per pick at 10 / 1,000 / 10,000 endpoints for each policy, and the heap
 * held by a balancer over 100,000 endpoints. Reported, never asserted.
 *
 *   node --import tsx --expose-gc bench/lb-picker.bench.ts
 */
import { bench, do_not_optimize, run, summary } from 'mitata';
import type { BackendCluster, UpstreamEndpoint } from '../src/ir/route-table.ts';
import { createBalancerFactory, mulberry32, type PickPolicy } from '../src/lb/index.ts';

const SIZES = [10, 1_000, 10_000];
const POLICIES: PickPolicy[] = ['p2c-peak-ewma', 'weighted-round-robin'];

/** `count` endpoints over three tiers (zone 20%, cluster 30%, clusterset 50%), weights 1..4. */
function syntheticCluster(count: number): BackendCluster {
  const tiers: UpstreamEndpoint[][] = [[], [], []];
  for (let i = 0; i < count; i++) {
    const tier = i < count * 0.2 ? 0 : i < count * 0.5 ? 1 : 2;
    const address = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
    tiers[tier]!.push({
      key: `${address}:8080`,
      address,
      port: 8080,
      cluster: ['east', 'east', 'west'][tier]!,
      zone: ['east-1', 'east-2', 'west-1'][tier]!,
      ready: true,
      weight: 1 + (i % 4),
    });
  }
  // Keep the near tier non-empty even for tiny clusters.
  if (tiers[0]!.length === 0) tiers[0]!.push(tiers[1]!.shift() ?? tiers[2]!.shift()!);
  return {
    id: `ServiceImport/bench/svc-${count}:80`,
    kind: 'ServiceImport',
    namespace: 'bench',
    name: `svc-${count}`,
    port: 80,
    protocol: 'http1',
    trafficDistribution: 'PreferSameZone',
    tiers,
  };
}

let now = 0;
const clock = { now: () => now };

for (const policy of POLICIES) {
  summary(() => {
    for (const size of SIZES) {
      const cluster = syntheticCluster(size);
      const balancer = createBalancerFactory({ policy, clock, random: mulberry32(42) }).build(cluster);
      bench(`${policy} pick, ${size} endpoints`, () => do_not_optimize(balancer.pick()));
    }
  });
  summary(() => {
    for (const size of SIZES) {
      const cluster = syntheticCluster(size);
      const factory = createBalancerFactory({
        policy,
        clock,
        random: mulberry32(42),
        outlier: { maxEjectionPercent: 100 },
      });
      const balancer = factory.build(cluster);
      // Half the near tier ejected: 70/30 split between two tiers, the realistic failover path.
      const near = cluster.tiers[0]!;
      for (let i = 0; i < Math.floor(near.length / 2); i++) {
        for (let j = 0; j < 3; j++) balancer.begin(near[i]!)({ result: 'connect-failure', latencyMs: 1 });
      }
      const tried = new Set([near[near.length - 1]!.key]);
      bench(`${policy} pick+begin+end, half near tier ejected, 1 tried, ${size} endpoints`, () => {
        now += 0.01;
        const endpoint = balancer.pick(tried)!;
        balancer.begin(endpoint)({ result: 'success', latencyMs: 5 });
      });
    }
  });
}

await run();

function heapUsed(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('run with --expose-gc');
  for (let i = 0; i < 3; i++) gc();
  const { heapUsed, external } = process.memoryUsage();
  // Typed arrays keep their contents outside the V8 heap: count both.
  return heapUsed + external;
}

const MEMORY_ENDPOINTS = 100_000;
const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
console.log(`\nheap for a ${MEMORY_ENDPOINTS.toLocaleString('en')}-endpoint backend (3 tiers):`);
for (const policy of POLICIES) {
  const base = heapUsed();
  const cluster = syntheticCluster(MEMORY_ENDPOINTS);
  const withIr = heapUsed();
  const factory = createBalancerFactory({ policy, clock, random: mulberry32(1) });
  const balancer = factory.build(cluster);
  const withBalancer = heapUsed();
  const rebuilt = factory.build(cluster);
  const withRebuild = heapUsed();
  console.log(
    `  ${policy.padEnd(22)} IR ${mib(withIr - base)}, balancer ${mib(withBalancer - withIr)} ` +
      `(${Math.round((withBalancer - withIr) / MEMORY_ENDPOINTS)} B/endpoint), ` +
      `a second build sharing the health registry ${mib(withRebuild - withBalancer)}`,
  );
  do_not_optimize([balancer, rebuilt, cluster]);
}
