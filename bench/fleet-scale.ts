/**
 * Fleet mode at scale: N members (default 50) each exporting `shop/web` with E endpoints (default 1,000, in
 * slices of 100), plus R unrelated HTTPRoutes to local Services. Measures, in one process, the gateway's own
 * pipeline as main.ts wires it (FleetSource around the file source -> Reconciler -> translate -> data plane):
 *  - start-up: members' views published to the first routing table applied, and RSS / heap after it;
 *  - one EndpointSlice change in one member (one endpoint's address) to the data plane having it: p50, p99, max
 *    over K changes, one at a time;
 *  - a burst of B changes in one tick (B members at once): how many tables it costs and how long;
 *  - garbage collection during the one-at-a-time changes (count and pauses, minor and major) and the heap a
 *    change allocates (used heap after it minus before, the median over changes no collection ran in).
 * A slice-only change takes the endpoint-only path (applyEndpoints, as main.ts wires it); `fullTables` counts
 * the full translations it needed anyway.
 * Members are in-memory views (as the membership layer publishes them): what is measured is derivation,
 * translation and the data plane, not the members' API servers.
 *
 *   node --import tsx --expose-gc bench/fleet-scale.ts [--members 50] [--endpoints 1000] [--changes 200] [--routes 200]
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { constants, PerformanceObserver } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { getHeapStatistics } from 'node:v8';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { stringify } from 'yaml';
import { startDataPlane } from '../src/app/data-plane.ts';
import { parseCli } from '../src/cli/args.ts';
import { Reconciler } from '../src/controller/reconciler.ts';
import { FleetSource } from '../src/fleet/fleet-source.ts';
import type { FleetMembers, MemberView, ServiceExport } from '../src/fleet/member-view.ts';
import { DEFAULT_SERVICE_IMPORT_KINDS } from '../src/gateway/options.ts';
import type { RouteTable } from '../src/ir/route-table.ts';
import { resolveIdentity } from '../src/mcs/cluster-identity.ts';
import type { EndpointSlice, Service } from '../src/snapshot/resources.ts';
import { FileSource } from '../src/sources/file/file-source.ts';

const { values } = parseArgs({
  options: {
    members: { type: 'string', default: '50' },
    endpoints: { type: 'string', default: '1000' },
    changes: { type: 'string', default: '200' },
    routes: { type: 'string', default: '200' },
    burst: { type: 'string', default: '50' },
  },
});
const MEMBERS = Number(values.members);
const ENDPOINTS = Number(values.endpoints);
const CHANGES = Number(values.changes);
const ROUTES = Number(values.routes);
const BURST = Number(values.burst);
const PER_SLICE = 100;
const WEB = 'ServiceImport/shop/web:80';

const gc = (globalThis as { gc?: () => void }).gc;
const mib = (n: number) => Math.round((n / 1024 / 1024) * 10) / 10;

function slice(member: number, index: number, firstIp: number, count: number, generation = 1): EndpointSlice {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name: `web-${index}`,
      namespace: 'shop',
      generation,
      labels: { 'kubernetes.io/service-name': 'web' },
    },
    addressType: 'IPv4',
    ports: [{ name: 'http', protocol: 'TCP', port: 8080 }],
    endpoints: Array.from({ length: count }, (_, i) => ({
      addresses: [ip(member, firstIp + i)],
      conditions: { ready: true, serving: true, terminating: false },
      zone: `m${member}-zone-${i % 3}`,
      nodeName: `m${member}-node-${i % 20}`,
    })),
  };
}

const ip = (member: number, n: number) => `10.${member}.${Math.floor(n / 250)}.${(n % 250) + 1}`;

function view(member: number, slices: readonly EndpointSlice[]): MemberView {
  const exp: ServiceExport = {
    apiVersion: 'multicluster.x-k8s.io/v1alpha1',
    kind: 'ServiceExport',
    metadata: { name: 'web', namespace: 'shop', creationTimestamp: '2026-01-01T00:00:00Z' },
  };
  const service: Service = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'web', namespace: 'shop' },
    spec: { ports: [{ name: 'http', protocol: 'TCP', port: 80 }], trafficDistribution: 'PreferSameZone' },
  };
  return {
    name: `member-${member}`,
    origin: { kind: 'Kubeconfig', file: `/members/member-${member}.yaml` },
    server: `https://member-${member}.example:6443`,
    state: 'synced',
    properties: { 'topology.kubernetes.io/region': `region-${member % 5}` },
    serviceExports: [exp],
    services: [service],
    endpointSlices: slices,
    clusterProperties: [],
  };
}

class BenchMembers implements FleetMembers {
  onChange: ((members: readonly MemberView[]) => void) | undefined;
  constructor(public views: MemberView[]) {}
  async start(onChange: (members: readonly MemberView[]) => void): Promise<void> {
    this.onChange = onChange;
    onChange(this.views);
  }
  async stop(): Promise<void> {}
  publish(): void {
    this.views = [...this.views];
    this.onChange?.(this.views);
  }
}

function manifests(): string {
  const docs: unknown[] = [
    {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'GatewayClass',
      metadata: { name: 'csgw' },
      spec: { controllerName: 'clusterset-gateway.io/gateway-controller' },
    },
    {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'Gateway',
      metadata: { name: 'edge', namespace: 'shop' },
      spec: { gatewayClassName: 'csgw', listeners: [{ name: 'http', protocol: 'HTTP', port: 18080 }] },
    },
    {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'HTTPRoute',
      metadata: { name: 'web', namespace: 'shop' },
      spec: {
        parentRefs: [{ name: 'edge' }],
        hostnames: ['web.example'],
        rules: [
          { backendRefs: [{ group: 'multicluster.x-k8s.io', kind: 'ServiceImport', name: 'web', port: 80 }] },
        ],
      },
    },
  ];
  for (let r = 0; r < ROUTES; r++) {
    docs.push(
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: `svc-${r}`, namespace: 'shop' },
        spec: { ports: [{ name: 'http', protocol: 'TCP', port: 80 }] },
      },
      {
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'HTTPRoute',
        metadata: { name: `route-${r}`, namespace: 'shop' },
        spec: {
          parentRefs: [{ name: 'edge' }],
          hostnames: [`app-${r}.example`],
          rules: [{ backendRefs: [{ name: `svc-${r}`, port: 80 }] }],
        },
      },
    );
  }
  return docs.map((d) => stringify(d)).join('---\n');
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

const dir = await mkdtemp(join(tmpdir(), 'fleet-scale-'));
await writeFile(join(dir, 'gateway.yaml'), manifests());
const cli = parseCli(['--manifests', dir, '--address', '127.0.0.1', '--no-health-checks'], {});
const logger = pino({ level: 'silent' });
const registry = new Registry();
const dataPlane = startDataPlane(cli, logger, registry);

let lastTable: RouteTable | undefined;
let applied = 0;
let fullTables = 0;
let waiter: { check: (t: RouteTable) => boolean; resolve: () => void } | undefined;
const reconciler = new Reconciler({
  translateOptions: (snapshot) => ({
    controllerName: cli.controllerName,
    identity: resolveIdentity(snapshot, cli.identity),
    serviceImportKinds: DEFAULT_SERVICE_IMPORT_KINDS,
    gatewayAddresses: ['127.0.0.1'],
    eastWest: false,
    loopbackAddressPerGateway: true,
  }),
  logger,
  registry,
  apply: async (result) => {
    await dataPlane.apply(result.table);
    applied++;
    fullTables++;
    seen(result.table);
  },
  // As main.ts: a change of EndpointSlices alone re-resolves only the backends they feed.
  applyEndpoints: async (backends, table) => {
    await dataPlane.applyEndpoints(backends, table);
    applied++;
    seen(table);
  },
});

function seen(table: RouteTable): void {
  lastTable = table;
  if (waiter?.check(table)) {
    waiter.resolve();
    waiter = undefined;
  }
}

const hasAddress = (table: RouteTable, address: string) =>
  table.backends[WEB]?.tiers.some((tier) => tier.some((e) => e.address === address)) ?? false;
/** A change that never reaches the table fails the run (with what was awaited) instead of hanging it. */
const until = (what: string, check: (t: RouteTable) => boolean) =>
  new Promise<void>((resolve, reject) => {
    if (lastTable && check(lastTable)) return resolve();
    const timer = setTimeout(() => reject(new Error(`${what} not in the routing table after 30 s`)), 30_000);
    waiter = {
      check,
      resolve: () => {
        clearTimeout(timer);
        resolve();
      },
    };
  });

const slices: EndpointSlice[][] = [];
for (let m = 0; m < MEMBERS; m++) {
  const own: EndpointSlice[] = [];
  for (let s = 0; s * PER_SLICE < ENDPOINTS; s++)
    own.push(slice(m, s, s * PER_SLICE, Math.min(PER_SLICE, ENDPOINTS - s * PER_SLICE)));
  slices.push(own);
}
const members = new BenchMembers(slices.map((s, m) => view(m, s)));
const source = new FleetSource({
  primary: new FileSource({ dir, logger, registry, debounceMs: 20 }),
  members,
  logger,
  registry,
});

const startedAt = performance.now();
await source.start((snapshot) => reconciler.submit(snapshot));
await reconciler.settled();
const startupMs = performance.now() - startedAt;
const total = lastTable?.backends[WEB]?.tiers.reduce((n, t) => n + t.length, 0) ?? 0;
gc?.();
const memory = process.memoryUsage();

// One change at a time: one endpoint of one slice of one member gets a new address.
let counter = 0;
function changeOne(member: number): string {
  counter++;
  const own = slices[member] as EndpointSlice[];
  const index = counter % own.length;
  // Valid IPv4 (third octet from 100 up): the fleet drops a member's endpoint whose address is not one.
  const fresh = ip(member, 25_000 + counter);
  const old = own[index] as EndpointSlice;
  const endpoints = [...(old.endpoints ?? [])];
  endpoints[0] = { ...(endpoints[0] as NonNullable<EndpointSlice['endpoints']>[number]), addresses: [fresh] };
  own[index] = { ...old, metadata: { ...old.metadata, generation: counter + 1 }, endpoints };
  members.views[member] = view(member, [...own]);
  return fresh;
}

const latencies: number[] = [];
const allocations: number[] = [];
const gcs = { minor: 0, major: 0, minorMs: 0, majorMs: 0, maxMajorMs: 0 };
let collections = 0;
const gcObserver = new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    collections++;
    const kind = (entry as unknown as { readonly detail?: { readonly kind?: number } }).detail?.kind;
    if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) {
      gcs.major++;
      gcs.majorMs += entry.duration;
      gcs.maxMajorMs = Math.max(gcs.maxMajorMs, entry.duration);
    } else {
      gcs.minor++;
      gcs.minorMs += entry.duration;
    }
  }
});
gcObserver.observe({ entryTypes: ['gc'] });
const fullBefore = fullTables;
for (let i = 0; i < CHANGES; i++) {
  const member = (i * 7) % MEMBERS;
  const fresh = changeOne(member);
  const collectionsBefore = collections;
  const heapBefore = getHeapStatistics().used_heap_size;
  const t0 = performance.now();
  const seen = until(fresh, (t) => hasAddress(t, fresh));
  members.publish();
  await seen;
  latencies.push(performance.now() - t0);
  await reconciler.settled();
  const heapAfter = getHeapStatistics().used_heap_size;
  // Entries are delivered asynchronously: a collection during this change may show only later; a used heap
  // that shrank says one ran all the same. Either way the change is left out of the median.
  await new Promise((resolve) => setImmediate(resolve));
  if (collections === collectionsBefore && heapAfter >= heapBefore) allocations.push(heapAfter - heapBefore);
}
gcObserver.disconnect();
latencies.sort((a, b) => a - b);
allocations.sort((a, b) => a - b);

// A burst: BURST members change in the same tick.
const appliedBefore = applied;
const freshes: string[] = [];
for (let m = 0; m < Math.min(BURST, MEMBERS); m++) freshes.push(changeOne(m));
const b0 = performance.now();
const burstSeen = until(`burst ${freshes.join(' ')}`, (t) => freshes.every((f) => hasAddress(t, f)));
members.publish();
await burstSeen;
await reconciler.settled();
const burstMs = performance.now() - b0;

const result = {
  members: MEMBERS,
  endpointsPerMember: ENDPOINTS,
  endpointsInImport: total,
  unrelatedRoutes: ROUTES,
  startupMs: Math.round(startupMs),
  rssMiB: mib(memory.rss),
  heapUsedMiB: mib(memory.heapUsed),
  sliceChange: {
    changes: CHANGES,
    p50Ms: Math.round(percentile(latencies, 50) * 10) / 10,
    p99Ms: Math.round(percentile(latencies, 99) * 10) / 10,
    maxMs: Math.round((latencies.at(-1) ?? 0) * 10) / 10,
    // Full translations applied (0: every change took the endpoint-only path).
    fullTables: fullTables - fullBefore,
  },
  gcDuringChanges: {
    minor: gcs.minor,
    minorMs: Math.round(gcs.minorMs),
    major: gcs.major,
    majorMs: Math.round(gcs.majorMs),
    maxMajorMs: Math.round(gcs.maxMajorMs * 10) / 10,
  },
  // Median heap allocated by one change (KiB), over the changes no collection ran in (how many: `of`).
  allocatedPerChange: {
    kib: Math.round(percentile(allocations, 50) / 1024),
    of: allocations.length,
  },
  burst: { changes: Math.min(BURST, MEMBERS), tables: applied - appliedBefore, ms: Math.round(burstMs) },
  node: process.version,
};
process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
await source.stop();
await dataPlane.close();
await rm(dir, { recursive: true, force: true });
process.exit(0);
