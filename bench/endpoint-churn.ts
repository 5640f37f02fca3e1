/**
 * EndpointSlice churn at scale (issue 28): R HTTPRoutes (default 10,000), each to its own Service with E/R
 * endpoints (default 50,000 in all, 5 per slice), one more route to a real backend that takes the headline load
 * (autocannon, 100 connections, small response, in a child process). Then U EndpointSlice updates per second
 * (default 100; each moves one endpoint of a random Service to a new address) while the load runs. The
 * pipeline is main.ts's: snapshot -> Reconciler (endpoint-only path) -> data plane; snapshots are built as the
 * kube source builds them: the last snapshot with the slices changed in the quiet time (--debounce-ms, the kube
 * source's 5 ms for slice-only changes; Snapshot.withEndpointSlices), or every object again with --full-snapshots
 * (what the kube source did before, with its 100 ms debounce).
 *
 * Reports: endpoint change to data plane (event to the balancer having it) p50/p99/max; the serving loop's
 * event-loop delay p50/p99/max with and without churn; requests/s with churn against the same load without;
 * translations and data plane updates by kind; RSS. Quiet and churn phases take turns (--rounds of --seconds each).
 *
 *   flock /tmp/heavy.lock timeout 600 node --import tsx --expose-gc bench/endpoint-churn.ts \
 *     [--routes 10000] [--endpoints 50000] [--rate 100] [--seconds 5] [--rounds 3] [--connections 100]
 */
import { once } from 'node:events';
import { type AddressInfo, createServer } from 'node:net';
import { createHistogram, type RecordableHistogram } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { startDataPlane } from '../src/app/data-plane.ts';
import { parseCli } from '../src/cli/args.ts';
import { Reconciler } from '../src/controller/reconciler.ts';
import type { BackendCluster } from '../src/ir/route-table.ts';
import type { AnyResource, EndpointSlice } from '../src/snapshot/resources.ts';
import { Snapshot } from '../src/snapshot/snapshot.ts';
import { loadFromChild, startTinyBackend } from './harness/churn-support.ts';

const { values } = parseArgs({
  options: {
    routes: { type: 'string', default: '10000' },
    endpoints: { type: 'string', default: '50000' },
    rate: { type: 'string', default: '100' },
    seconds: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '100' },
    'debounce-ms': { type: 'string', default: '5' },
    'full-snapshots': { type: 'boolean', default: false },
  },
});
const ROUTES = Number(values.routes);
const ENDPOINTS = Number(values.endpoints);
const RATE = Number(values.rate);
const SECONDS = Number(values.seconds);
const ROUNDS = Number(values.rounds);
const CONNECTIONS = Number(values.connections);
const DEBOUNCE_MS = Number(values['debounce-ms']);
const FULL_SNAPSHOTS = values['full-snapshots'];
const PER_SERVICE = Math.max(1, Math.round(ENDPOINTS / ROUTES));
const NS = 'bench';

const gc = (globalThis as { gc?: () => void }).gc;
const mib = (n: number) => Math.round((n / 1024 / 1024) * 10) / 10;
const round = (n: number) => Math.round(n * 10) / 10;
const roundAll = <T extends Record<string, number>>(o: T): T =>
  Object.fromEntries(Object.entries(o).map(([k, v]) => [k, round(v)])) as T;
const ip = (n: number) => `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;

function slice(service: number, firstIp: number, generation = 1): EndpointSlice {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name: `svc-${service}-1`,
      namespace: NS,
      generation,
      labels: { 'kubernetes.io/service-name': `svc-${service}` },
    },
    addressType: 'IPv4',
    ports: [{ name: 'http', protocol: 'TCP', port: 8080 }],
    endpoints: Array.from({ length: PER_SERVICE }, (_, i) => ({
      addresses: [ip(firstIp + i)],
      conditions: { ready: true },
      zone: `zone-${i % 3}`,
    })),
  };
}

function objects(backendPort: number, gatewayPort: number): AnyResource[] {
  const out: unknown[] = [
    {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'GatewayClass',
      metadata: { name: 'csgw', generation: 1 },
      spec: { controllerName: 'clusterset-gateway.io/gateway-controller' },
    },
    {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'Gateway',
      metadata: { name: 'edge', namespace: NS, generation: 1 },
      spec: { gatewayClassName: 'csgw', listeners: [{ name: 'http', protocol: 'HTTP', port: gatewayPort }] },
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'hot', namespace: NS },
      spec: { ports: [{ name: 'http', protocol: 'TCP', port: 80 }] },
    },
    {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: 'hot-1', namespace: NS, labels: { 'kubernetes.io/service-name': 'hot' } },
      addressType: 'IPv4',
      ports: [{ name: 'http', protocol: 'TCP', port: backendPort }],
      endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: true } }],
    },
    {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'HTTPRoute',
      metadata: { name: 'hot', namespace: NS, generation: 1 },
      spec: {
        parentRefs: [{ name: 'edge' }],
        hostnames: ['hot.example'],
        rules: [{ backendRefs: [{ name: 'hot', port: 80 }] }],
      },
    },
  ];
  for (let r = 0; r < ROUTES; r++) {
    out.push(
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: `svc-${r}`, namespace: NS },
        spec: { ports: [{ name: 'http', protocol: 'TCP', port: 80 }] },
      },
      slice(r, r * PER_SERVICE),
      {
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'HTTPRoute',
        metadata: { name: `route-${r}`, namespace: NS, generation: 1 },
        spec: {
          parentRefs: [{ name: 'edge' }],
          hostnames: [`app-${r}.example`],
          rules: [
            {
              matches: [{ path: { type: 'PathPrefix', value: `/r${r}` } }],
              backendRefs: [{ name: `svc-${r}`, port: 80 }],
            },
          ],
        },
      },
    );
  }
  return out as AnyResource[];
}

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  server.close();
  return port;
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

/** The headline load from a child process: requests/s over the run. */
const load = (port: number, seconds: number) =>
  loadFromChild({ port, seconds, connections: CONNECTIONS, host: 'hot.example' });

const backend = await startTinyBackend();
const cli = parseCli(['--address', '127.0.0.1', '--no-health-checks'], {});
const logger = pino({ level: 'silent' });
const registry = new Registry();
const dataPlane = startDataPlane(cli, logger, registry);

/** New address -> when its slice change happened; resolved when the data plane has it. */
const pending = new Map<string, number>();
const changeLatencies: number[] = [];
const seen = (backends: readonly BackendCluster[]) => {
  const now = performance.now();
  for (const b of backends)
    for (const tier of b.tiers)
      for (const e of tier) {
        const t0 = pending.get(e.address);
        if (t0 !== undefined) {
          changeLatencies.push(now - t0);
          pending.delete(e.address);
        }
      }
};
const reconciler = new Reconciler({
  translateOptions: () => ({
    controllerName: cli.controllerName,
    identity: cli.identity,
    serviceImportKinds: [],
    gatewayAddresses: ['127.0.0.1'],
    eastWest: false,
  }),
  logger,
  registry,
  apply: async (result) => {
    await dataPlane.apply(result.table);
    seen(Object.values(result.table.backends));
  },
  applyEndpoints: async (backends, table) => {
    await dataPlane.applyEndpoints(backends, table);
    seen(backends);
  },
});

const port = await freePort();
const all = objects(backend.port, port);
const t0 = performance.now();
let current = new Snapshot(all);
reconciler.submit(current);
await reconciler.settled();
const startupMs = performance.now() - t0;

// Warm up the keep-alive pools and JIT.
await load(port, 3);

// Churn: RATE slice updates per second, emitted as the kube source does (a new Snapshot per debounce window).
const sliceIndex = new Map<number, number>();
all.forEach((o, i) => {
  if (o.kind === 'EndpointSlice' && o.metadata.name.startsWith('svc-'))
    sliceIndex.set(Number(o.metadata.name.slice(4, o.metadata.name.lastIndexOf('-'))), i);
});
let changes = 0;
let next = ROUTES * PER_SERVICE + 1_000_000;
let debounce: NodeJS.Timeout | undefined;
/** Slices changed in this quiet time: index in `all` -> the slice the last snapshot has. */
const changed = new Map<number, EndpointSlice>();
const churnOnce = () => {
  const service = Math.floor(Math.random() * ROUTES);
  const index = sliceIndex.get(service) as number;
  const old = all[index] as EndpointSlice;
  const address = ip(next++);
  const endpoints = [...(old.endpoints ?? [])];
  endpoints[changes % endpoints.length] = {
    ...(endpoints[0] as NonNullable<EndpointSlice['endpoints']>[number]),
    addresses: [address],
  };
  if (!changed.has(index)) changed.set(index, old);
  all[index] = {
    ...old,
    metadata: { ...old.metadata, generation: (old.metadata.generation ?? 1) + 1 },
    endpoints,
  };
  pending.set(address, performance.now());
  changes++;
  if (debounce === undefined) {
    debounce = setTimeout(() => {
      debounce = undefined;
      const slices = [...changed].map(([i, before]) => ({ before, after: all[i] as EndpointSlice }));
      changed.clear();
      current = FULL_SNAPSHOTS ? new Snapshot(all) : Snapshot.withEndpointSlices(current, slices);
      reconciler.submit(current);
    }, DEBOUNCE_MS);
  }
};

// Quiet and churn phases take turns (ROUNDS of each, SECONDS long), so that the shared machine's moods fall on
// both alike; the ratio is of the medians.
const quietLoop = createHistogram();
const churnLoop = createHistogram();
/**
 * The serving loop's delay over `phase`, added to `into`: how late a 1 ms timer fires, in nanoseconds (as
 * monitorEventLoopDelay measures; its histograms cannot be merged across phases).
 */
const monitored = async <T>(into: RecordableHistogram, phase: () => Promise<T>): Promise<T> => {
  let last = performance.now();
  const ticker = setInterval(() => {
    const now = performance.now();
    into.record(Math.max(1, Math.round((now - last - 1) * 1e6)));
    last = now;
  }, 1);
  try {
    return await phase();
  } finally {
    clearInterval(ticker);
  }
};
const quietRuns: Awaited<ReturnType<typeof load>>[] = [];
const churnRuns: Awaited<ReturnType<typeof load>>[] = [];
for (let round = 0; round < ROUNDS; round++) {
  quietRuns.push(await monitored(quietLoop, () => load(port, SECONDS)));
  const churn = setInterval(churnOnce, 1000 / RATE);
  churnRuns.push(await monitored(churnLoop, () => load(port, SECONDS)));
  clearInterval(churn);
  await new Promise((r) => setTimeout(r, DEBOUNCE_MS + 50));
  await reconciler.settled();
  process.stderr.write(
    `round ${round + 1}/${ROUNDS}: quiet ${quietRuns.at(-1)?.rps} req/s, churn ${churnRuns.at(-1)?.rps} req/s\n`,
  );
}
const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
const quiet = {
  rps: median(quietRuns.map((r) => r.rps)),
  p99Ms: median(quietRuns.map((r) => r.p99Ms)),
  errors: quietRuns.reduce((n, r) => n + r.errors, 0),
};
const churned = {
  rps: median(churnRuns.map((r) => r.rps)),
  p99Ms: median(churnRuns.map((r) => r.p99Ms)),
  errors: churnRuns.reduce((n, r) => n + r.errors, 0),
};
const loopMs = (h: RecordableHistogram) => ({
  p50: h.percentile(50) / 1e6,
  p99: h.percentile(99) / 1e6,
  max: h.max / 1e6,
});

// What one slice change costs the serving loop, without load: changes applied one after another.
const costChanges = 1_000;
const costStart = performance.now();
for (let i = 0; i < costChanges; i++) {
  churnOnce();
  await new Promise((r) => setTimeout(r, DEBOUNCE_MS + 1));
  await reconciler.settled();
}
const perChangeMs = (performance.now() - costStart) / costChanges - (DEBOUNCE_MS + 1);

// Full translations for comparison: a route change (translated, compiled, applied) and a change that cannot
// alter the table (a new unrelated Service: translated, found equal, not applied). The work runs in slices
// (--translation-slice-ms): the longest the serving loop waited meanwhile is what requests feel.
const timed = async (
  objects: readonly AnyResource[],
): Promise<{ ms: number; longestLoopStallMs: number }> => {
  let last = performance.now();
  let longest = 0;
  const ticker = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 1);
  const start = performance.now();
  reconciler.submit(new Snapshot(objects));
  await reconciler.settled();
  const ms = round(performance.now() - start);
  clearInterval(ticker);
  return { ms, longestLoopStallMs: round(Math.max(longest, performance.now() - last)) };
};
const routeIndex = all.findIndex((o) => o.kind === 'HTTPRoute' && o.metadata.name === 'route-0');
const route0 = all[routeIndex] as AnyResource & { spec: Record<string, unknown> };
all[routeIndex] = {
  ...route0,
  metadata: { ...route0.metadata, generation: 2 },
  spec: { ...route0.spec, hostnames: ['app-0-renamed.example'] },
} as AnyResource;
const routeChangeMs = await timed(all);
const unrelatedChangeMs = await timed([
  ...all,
  {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'unrelated', namespace: NS },
    spec: {},
  } as AnyResource,
]);
gc?.();
changeLatencies.sort((a, b) => a - b);

const metric = async (name: string) =>
  Object.fromEntries(
    ((await registry.getSingleMetric(name)?.get())?.values ?? []).map((v) => [
      Object.values(v.labels).join(','),
      v.value,
    ]),
  );
const result = {
  routes: ROUTES + 1,
  endpoints: ROUTES * PER_SERVICE + 1,
  updatesPerSecond: RATE,
  debounceMs: DEBOUNCE_MS,
  snapshots: FULL_SNAPSHOTS ? 'full' : 'slice deltas',
  startupMs: Math.round(startupMs),
  endpointChangeToDataPlane: {
    changes,
    applied: changeLatencies.length,
    p50Ms: round(percentile(changeLatencies, 50)),
    p99Ms: round(percentile(changeLatencies, 99)),
    maxMs: round(changeLatencies.at(-1) ?? Number.NaN),
  },
  eventLoopDelayMs: {
    quiet: roundAll(loopMs(quietLoop)),
    churn: roundAll(loopMs(churnLoop)),
  },
  throughput: {
    quietRps: quiet.rps,
    churnRps: churned.rps,
    ratio: Math.round((churned.rps / quiet.rps) * 1000) / 1000,
    roundRatios: quietRuns.map((q, i) => Math.round(((churnRuns[i]?.rps ?? 0) / q.rps) * 1000) / 1000),
    quietP99Ms: quiet.p99Ms,
    churnP99Ms: churned.p99Ms,
    errors: quiet.errors + churned.errors,
  },
  // An upper bound: the wall time of a change beyond its quiet time, timers and promise turns included.
  loopTimePerChangeMs: round(perChangeMs * 100) / 100,
  fullTranslationMs: { routeChange: routeChangeMs, unrelatedChange: unrelatedChangeMs },
  translations: await metric('clusterset_gateway_translations_total'),
  dataPlaneUpdates: await metric('clusterset_gateway_data_plane_updates_total'),
  rssMiB: mib(process.memoryUsage().rss),
  node: process.version,
};
process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
await dataPlane.close();
backend.child.kill();
process.exit(0);
