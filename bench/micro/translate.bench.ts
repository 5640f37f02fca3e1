/**
 * Translation time and heap (issue 5): translate() for 10,000 HTTPRoutes and for a ServiceImport with
 * 100,000 endpoints in 5 clusters. Targets: 10,000 routes under 1 s; 100,000 endpoints under 200 MB of heap.
 * Reported, never asserted.
 *
 *   node --import tsx --expose-gc bench/micro/translate.bench.ts
 */
import { bench, do_not_optimize, run, summary } from 'mitata';
import { translate } from '../../src/gateway/translate.ts';
import type { Snapshot } from '../../src/snapshot/snapshot.ts';
import {
  grid,
  hasGc,
  heapUsedMiB,
  SINGLE_SERVICE,
  serviceImportOf,
  snapshotOf,
  TRANSLATE_OPTIONS,
} from './fixtures.ts';

const CASES: readonly { readonly name: string; readonly build: () => Snapshot }[] = [
  { name: '10 routes', build: () => snapshotOf({ routes: grid(1, 10), backend: SINGLE_SERVICE }) },
  { name: '10,000 routes', build: () => snapshotOf({ routes: grid(1000, 10), backend: SINGLE_SERVICE }) },
  {
    name: '100,000 endpoints',
    build: () => snapshotOf({ routes: { kind: 'catch-all' }, backend: serviceImportOf(100_000, 5) }),
  },
];

if (!hasGc()) process.stdout.write('(run with --expose-gc for heap figures)\n');
const lines: string[] = [];
const snapshots = new Map<string, Snapshot>();
for (const c of CASES) {
  const before = heapUsedMiB();
  const snapshot = c.build();
  const withSnapshot = heapUsedMiB();
  const t0 = performance.now();
  const result = translate(snapshot, TRANSLATE_OPTIONS);
  const firstMs = performance.now() - t0;
  const withResult = heapUsedMiB();
  const routes = result.table.ports.reduce(
    (n, p) =>
      n + p.listeners.reduce((m, l) => m + l.virtualHosts.reduce((k, v) => k + v.routes.length, 0), 0),
    0,
  );
  const endpoints = Object.values(result.table.backends).reduce(
    (n, b) => n + b.tiers.reduce((m, t) => m + t.length, 0),
    0,
  );
  lines.push(
    `${c.name.padEnd(18)} first translate ${firstMs.toFixed(0).padStart(5)} ms; heap: snapshot ${(withSnapshot - before).toFixed(1)} MiB, table+statuses ${(withResult - withSnapshot).toFixed(1)} MiB, total ${withResult.toFixed(1)} MiB; table: ${routes} route entries, ${endpoints} endpoints, ${result.statuses.length} statuses`,
  );
  do_not_optimize(result);
  snapshots.set(c.name, snapshot);
}
process.stdout.write(`${lines.join('\n')}\n\n`);

summary(() => {
  for (const c of CASES) {
    const snapshot = snapshots.get(c.name);
    if (snapshot) bench(`translate ${c.name}`, () => do_not_optimize(translate(snapshot, TRANSLATE_OPTIONS)));
  }
});

await run();
