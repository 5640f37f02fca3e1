/**
 * Route changes at scale (issue 45): a gateway process with R HTTPRoutes (default 10,000: 1,000 hostnames x 10
 * PathPrefixes, the routes-10k layout, from the file source) under steady load (a load generator in a child process on
 * one of the routes), then one route edited every --interval-ms (a request header naming a new generation,
 * written to its route file as an editor would) for --seconds. Read from the gateway's own /metrics: the serving
 * thread's event-loop delay (prom-client's nodejs_eventloop_lag_*, monitorEventLoopDelay at 10 ms resolution,
 * reset at every scrape; reported as the delay beyond the 10 ms) over a quiet phase and over the churn, and the tables applied. The load reports the
 * requests' p99 in both phases. The load is sent at a fixed overall rate (--rate, default 2,000 requests/s, well below
 * what the gateway serves on 2 cores) so that request latency shows stalls, not queueing at saturation. By default
 * (--generator paced, bench/harness/paced-load.ts) the requests are due at an even pace and counted from when they
 * were due, and the generator reports its own timer lateness and loop delay (what it adds, not the gateway);
 * --generator autocannon is the load of earlier runs (autocannon -R: a burst per connection every second; --rate 0:
 * the closed loop, every connection sends its next request when the last is answered).
 *
 * Rows, one gateway at a time in the same run: `current` (this tree's dist/main.js as started by default:
 * `node scripts/build.mjs` first; it translates on its thread), `baseline`
 * (--baseline, a build of main before this work), `thread` and `no-thread` (current with --translation-thread or
 * --no-translation-thread; the first is the default now, kept for runs against builds where it was not),
 * `same-priority` (current with --translation-thread-nice 0: the thread at the serving thread's priority),
 * `node-args` (current with --node-args "..." as node's own flags, e.g. a GC setting), and
 * `direct` (the load straight to the backend, no gateway: the floor of the request figures on this machine then).
 * --cpu-prof DIR writes each gateway's CPU profiles (its serving thread's and its translation thread's) to DIR/<row>/ (read it with
 * bench/profile/summarize-cpuprofile.ts).
 *
 *   flock /tmp/bench.lock timeout 600 node --import tsx bench/route-churn.ts \
 *     [--routes 10000] [--interval-ms 200] [--seconds 20] [--quiet-seconds 8] [--connections 50] [--rate 2000] \
 *     [--configs current,baseline,thread,no-thread] [--baseline /work/baseline/dist/main.js] [--cpu-prof DIR] \
 *     [--generator paced|autocannon] [--node-args "--flag ..."]
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rename, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { loadFromChild, startTinyBackend } from './harness/churn-support.ts';
import {
  type GatewayManifestOptions,
  gatewayManifests,
  LISTENER_PORT,
  ROUTES_PER_FILE,
  routeDocuments,
} from './harness/gateway-manifests.ts';
import { pacedLoadFromChild } from './harness/paced-load.ts';
import { freePort } from './harness/ports.ts';
import { spawnPinned, waitForHttp } from './harness/processes.ts';

const { values } = parseArgs({
  options: {
    routes: { type: 'string', default: '10000' },
    'interval-ms': { type: 'string', default: '200' },
    seconds: { type: 'string', default: '20' },
    'quiet-seconds': { type: 'string', default: '8' },
    connections: { type: 'string', default: '50' },
    rate: { type: 'string', default: '2000' },
    configs: { type: 'string', default: 'current,baseline,thread' },
    baseline: { type: 'string', default: '/work/baseline/dist/main.js' },
    current: { type: 'string', default: join(import.meta.dirname, '..', 'dist', 'main.js') },
    'cpu-prof': { type: 'string' },
    generator: { type: 'string', default: 'paced' },
    'node-args': { type: 'string', default: '' },
  },
});
const ROUTES = Number(values.routes);
const INTERVAL_MS = Number(values['interval-ms']);
const SECONDS = Number(values.seconds);
const QUIET_SECONDS = Number(values['quiet-seconds']);
const CONNECTIONS = Number(values.connections);
const RATE = Number(values.rate);
const CPU_PROF = values['cpu-prof'];
const GENERATOR = values.generator;
if (GENERATOR !== 'paced' && GENERATOR !== 'autocannon') throw new Error('--generator: paced or autocannon');
if (GENERATOR === 'paced' && RATE <= 0) throw new Error('--generator paced needs --rate > 0');

interface Row {
  readonly key: string;
  readonly name: string;
  readonly program: string;
  readonly args: readonly string[];
  /** Node's own flags for this row's gateway (before the program). */
  readonly nodeArgs?: readonly string[];
}
const ROWS: Record<string, Row> = {
  current: { key: 'current', name: 'current', program: values.current, args: [] },
  baseline: { key: 'baseline', name: 'baseline', program: values.baseline, args: [] },
  'no-thread': {
    key: 'no-thread',
    name: 'current --no-translation-thread',
    program: values.current,
    args: ['--no-translation-thread'],
  },
  'node-args': {
    key: 'node-args',
    name: `current with node ${values['node-args']}`,
    program: values.current,
    args: [],
    nodeArgs: values['node-args'].split(' ').filter((a) => a !== ''),
  },
  'same-priority': {
    key: 'same-priority',
    name: 'current --translation-thread-nice 0',
    program: values.current,
    args: ['--translation-thread-nice', '0'],
  },
  thread: {
    key: 'thread',
    name: 'current --translation-thread',
    program: values.current,
    args: ['--translation-thread'],
  },
};

const round = (n: number) => Math.round(n * 10) / 10;

/** Prometheus text to `name{labels}` -> value (the few series read here). */
async function scrape(adminPort: number): Promise<Map<string, number>> {
  const text = await (await fetch(`http://127.0.0.1:${adminPort}/metrics`)).text();
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || line === '') continue;
    const space = line.lastIndexOf(' ');
    out.set(line.slice(0, space), Number(line.slice(space + 1)));
  }
  return out;
}

/** monitorEventLoopDelay records the time between its 10 ms timer's runs: the delay is what is beyond 10 ms. */
const RESOLUTION_MS = 10;
const loopDelay = (m: Map<string, number>) => {
  const ms = (name: string) =>
    round(Math.max(0, (m.get(`nodejs_eventloop_lag_${name}_seconds`) ?? Number.NaN) * 1000 - RESOLUTION_MS));
  return { p50Ms: ms('p50'), p99Ms: ms('p99'), maxMs: ms('max') };
};

const tablesApplied = (m: Map<string, number>) =>
  [...m]
    .filter(([k]) => k.startsWith('clusterset_gateway_data_plane_updates_total'))
    .reduce((n, [, v]) => n + v, 0);

/**
 * The serving thread's GC between two scrapes (prom-client's nodejs_gc_duration_seconds, by kind): total time,
 * collections, and collections longer than 10 ms (its bucket bounds are 1 ms, 10 ms, 100 ms, ...).
 */
const gcBetween = (before: Map<string, number>, after: Map<string, number>) => {
  const out: Record<string, { ms: number; count: number; over10Ms: number }> = {};
  for (const kind of ['minor', 'major', 'incremental', 'weakcb']) {
    const delta = (series: string) => (after.get(series) ?? 0) - (before.get(series) ?? 0);
    const count = delta(`nodejs_gc_duration_seconds_count{kind="${kind}"}`);
    if (count === 0) continue;
    out[kind] = {
      ms: round(delta(`nodejs_gc_duration_seconds_sum{kind="${kind}"}`) * 1000),
      count,
      over10Ms: count - delta(`nodejs_gc_duration_seconds_bucket{le="0.01",kind="${kind}"}`),
    };
  }
  return out;
};

async function measure(row: Row, backendPort: number) {
  const manifests: GatewayManifestOptions = {
    routes: { kind: 'grid', hosts: Math.ceil(ROUTES / 10), pathsPerHost: 10 },
    backend: { kind: 'service', endpoint: { address: '127.0.0.1', port: backendPort } },
  };
  const dir = await mkdtemp(join(tmpdir(), 'route-churn-'));
  for (const [name, text] of Object.entries(gatewayManifests(manifests)))
    await writeFile(join(dir, name), text);
  const routes = routeDocuments(manifests);
  const servedPort = await freePort();
  const adminPort = await freePort();
  const started = performance.now();
  const gateway = spawnPinned(
    'gateway',
    process.execPath,
    [
      ...(CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', join(CPU_PROF, row.key)] : []),
      '--max-semi-space-size=8',
      ...(row.nodeArgs ?? []),
      row.program,
      '--manifests',
      dir,
      '--listener-port-offset',
      String(servedPort - LISTENER_PORT),
      '--admin-port',
      String(adminPort),
      '--log-level',
      'warn',
      '--drain-timeout-ms',
      '1000',
      '--max-manifest-objects',
      String(ROUTES * 2 + 100),
      ...row.args,
    ],
    { cpus: '', scratchDir: dir },
  );
  try {
    const ready = await waitForHttp(`http://127.0.0.1:${adminPort}/readyz`, gateway, 180_000);
    if (!ready.ok) throw new Error(`${row.name}: ${ready.reason}`);
    const startupMs = Math.round(performance.now() - started);
    const target = { port: servedPort, connections: CONNECTIONS, host: 'h0.bench.test', path: '/p1/item' };
    const load = (seconds: number) =>
      GENERATOR === 'paced'
        ? pacedLoadFromChild({ ...target, seconds, rate: RATE })
        : loadFromChild({ ...target, seconds, ...(RATE > 0 ? { rate: RATE } : {}) });
    await load(2);
    const beforeQuiet = await scrape(adminPort);
    const quiet = await load(QUIET_SECONDS);
    const afterQuiet = await scrape(adminPort);

    let generation = 0;
    let stop = false;
    const edits = (async () => {
      while (!stop) {
        const n = Math.floor(Math.random() * ROUTES);
        routes.documents[n] = routes.edited(n, ++generation);
        const first = Math.floor(n / ROUTES_PER_FILE) * ROUTES_PER_FILE;
        const tmp = join(dir, `.edit-${generation}.tmp`);
        await writeFile(tmp, routes.documents.slice(first, first + ROUTES_PER_FILE).join('---\n'));
        await rename(tmp, join(dir, routes.fileName(n)));
        await sleep(INTERVAL_MS);
      }
    })();
    const churn = await load(SECONDS);
    stop = true;
    await edits;
    const afterChurn = await scrape(adminPort);
    return {
      config: row.name,
      startupMs,
      edits: generation,
      tablesApplied: tablesApplied(afterChurn) - tablesApplied(afterQuiet),
      quiet: { loop: loopDelay(afterQuiet), gc: gcBetween(beforeQuiet, afterQuiet), requests: quiet },
      churn: { loop: loopDelay(afterChurn), gc: gcBetween(afterQuiet, afterChurn), requests: churn },
    };
  } finally {
    // The grace lets a --cpu-prof profile be written.
    await gateway.stop(60_000);
  }
}

/**
 * The same load straight to the backend, no gateway: the floor of the request figures on this machine at that
 * moment (the generator, the backend and the kernel on the cores the gateway would share). Two phases as the
 * gateway rows' quiet and churn, with nothing edited.
 */
async function measureDirect(backendPort: number) {
  const target = { port: backendPort, connections: CONNECTIONS, host: 'direct.bench.test', path: '/p1/item' };
  const load = (seconds: number) =>
    GENERATOR === 'paced'
      ? pacedLoadFromChild({ ...target, seconds, rate: RATE })
      : loadFromChild({ ...target, seconds, ...(RATE > 0 ? { rate: RATE } : {}) });
  await load(2);
  return {
    config: 'direct (no gateway)',
    quiet: { requests: await load(QUIET_SECONDS) },
    churn: { requests: await load(SECONDS) },
  };
}

const backend = await startTinyBackend();
const results = [];
const loadavg = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const load0 = loadavg();
for (const key of values.configs.split(',')) {
  if (key === 'direct') {
    process.stderr.write('direct: the load straight to the backend\n');
    results.push(await measureDirect(backend.port));
    process.stderr.write(`${JSON.stringify(results.at(-1))}\n`);
    continue;
  }
  const row = ROWS[key];
  if (row === undefined)
    throw new Error(
      `unknown config ${key} (current, baseline, thread, no-thread, same-priority, node-args, direct)`,
    );
  process.stderr.write(`${row.name}: ${ROUTES} routes, an edit every ${INTERVAL_MS} ms for ${SECONDS} s\n`);
  results.push(await measure(row, backend.port));
  process.stderr.write(`${JSON.stringify(results.at(-1))}\n`);
}
backend.child.kill();
process.stdout.write(
  `${JSON.stringify({ routes: ROUTES, intervalMs: INTERVAL_MS, connections: CONNECTIONS, rate: RATE || 'closed loop', seconds: SECONDS, loadavg: { start: load0, end: loadavg() }, results }, null, 2)}\n`,
);
