/**
 * What the topology page costs the data plane: the gateway with a ServiceImport of N endpoints in 5 clusters,
 * loaded by autocannon, in alternating runs with the page closed and open (3 live /api/topology/stream
 * clients, as three browser tabs, plus a poll of /api/topology every second). Same process, same run.
 *
 *   node --import tsx bench/admin-page-cost.ts [--endpoints 1000] [--runs 3] [--duration 5] [--connections 50]
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { pinSelf, planCpus } from './harness/affinity.ts';
import { runAutocannon } from './harness/autocannon-load.ts';
import { startBackend } from './harness/backend.ts';
import { compilePrograms } from './harness/compiled.ts';
import type { Endpoint } from './harness/endpoints.ts';
import { gatewayManifests, LISTENER_PORT } from './harness/gateway-manifests.ts';
import { freePort, freePorts } from './harness/ports.ts';
import { spawnPinned, treeCpuSeconds, waitForHttp } from './harness/processes.ts';

const ROOT = resolve(import.meta.dirname, '..');
const { values } = parseArgs({
  options: {
    endpoints: { type: 'string', default: '1000' },
    runs: { type: 'string', default: '3' },
    duration: { type: 'string', default: '5' },
    connections: { type: 'string', default: '50' },
  },
});
const endpointCount = Number(values.endpoints);
const runs = Number(values.runs);
const durationSec = Number(values.duration);
const connections = Number(values.connections);

const plan = planCpus();
pinSelf(plan);

const CLUSTERS = 5;
const ports = await freePorts(CLUSTERS);
const clusters = ports.map((port, c) => {
  const endpoints: Endpoint[] = [];
  for (let i = 0; i < endpointCount / CLUSTERS; i++) {
    endpoints.push({ address: `127.0.${10 + c * 10 + Math.floor(i / 250)}.${(i % 250) + 1}`, port });
  }
  return { name: `cluster-${c + 1}`, endpoints };
});
const programs = compilePrograms(ROOT, (line) => process.stderr.write(`${line}\n`));
const backend = await startBackend({
  cpus: plan.loadCpus,
  endpoints: clusters.flatMap((c) => c.endpoints),
  projectDir: ROOT,
  programs,
});

const dir = await mkdtemp(join(tmpdir(), 'bench-admin-page-'));
for (const [name, yaml] of Object.entries(
  gatewayManifests({ routes: { kind: 'catch-all' }, backend: { kind: 'service-import', clusters } }),
)) {
  await writeFile(join(dir, name), yaml);
}
const listenerPort = await freePort();
const adminPort = await freePort();
const gateway = spawnPinned(
  'gateway',
  process.execPath,
  [
    ...programs.gateway,
    '--manifests',
    dir,
    '--admin-port',
    String(adminPort),
    '--listener-port-offset',
    String(listenerPort - LISTENER_PORT),
    '--log-level',
    'warn',
  ],
  { cpus: plan.proxyCpus, cwd: ROOT },
);
const origin = `http://127.0.0.1:${listenerPort}`;
const admin = `http://127.0.0.1:${adminPort}`;
const ready = await waitForHttp(`${origin}/`, gateway, 30_000, { host: 'bench.test' });
if (!ready.ok) throw new Error(`gateway not ready: ${ready.reason}`);

/** Three live streams and a poller, as a few open browser tabs would hold. */
function openPage(): { bytes: () => number; close(): void } {
  let bytes = 0;
  const requests = Array.from({ length: 3 }, () =>
    get(`${admin}/api/topology/stream`, (res) => {
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
      });
    }),
  );
  const poll = setInterval(() => {
    void fetch(`${admin}/api/topology`).then(async (r) => {
      bytes += (await r.arrayBuffer()).byteLength;
    });
  }, 1000);
  return {
    bytes: () => bytes,
    close() {
      clearInterval(poll);
      for (const req of requests) req.destroy();
    },
  };
}

interface Row {
  readonly page: 'closed' | 'open';
  readonly rps: number;
  readonly p50: number;
  readonly p99: number;
  readonly cpuMsPer1k: number;
  readonly adminBytes: number;
}

const rows: Row[] = [];
const load = () =>
  runAutocannon({
    origin,
    method: 'GET',
    targets: [{ host: 'bench.test', path: '/' }],
    connections,
    durationSec,
  });
await load(); // warm-up
for (let run = 0; run < runs; run++) {
  for (const page of ['closed', 'open'] as const) {
    const opened = page === 'open' ? openPage() : undefined;
    if (opened) await new Promise((r) => setTimeout(r, 1500));
    const cpuBefore = treeCpuSeconds(gateway.pid) ?? 0;
    const result = await load();
    const cpu = (treeCpuSeconds(gateway.pid) ?? 0) - cpuBefore;
    opened?.close();
    rows.push({
      page,
      rps: result.rps,
      p50: result.latencyMs.p50,
      p99: result.latencyMs.p99,
      cpuMsPer1k: result.requests > 0 ? (cpu * 1e6) / result.requests : 0,
      adminBytes: opened?.bytes() ?? 0,
    });
    const last = rows.at(-1)!;
    console.log(
      `run ${run + 1} page ${page.padEnd(6)} ${last.rps.toFixed(0).padStart(7)} req/s  p50 ${last.p50} ms  p99 ${last.p99} ms  ` +
        `gateway CPU ${last.cpuMsPer1k.toFixed(1)} ms per 1k requests  admin bytes ${last.adminBytes}`,
    );
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const of = (page: Row['page'], pick: (r: Row) => number) =>
  median(rows.filter((r) => r.page === page).map(pick));
console.log(
  `\n${endpointCount} endpoints, ${connections} connections, ${runs} x ${durationSec} s per side; ${plan.note}; backend ${backend.kind}`,
);
console.log('| page   | req/s (median) | p50 ms | p99 ms | gateway CPU ms / 1k requests |');
console.log('| ------ | -------------: | -----: | -----: | ---------------------------: |');
for (const page of ['closed', 'open'] as const) {
  console.log(
    `| ${page.padEnd(6)} | ${of(page, (r) => r.rps).toFixed(0)} | ${of(page, (r) => r.p50)} | ${of(page, (r) => r.p99)} | ${of(page, (r) => r.cpuMsPer1k).toFixed(1)} |`,
  );
}
console.log(`open / closed req/s: ${(of('open', (r) => r.rps) / of('closed', (r) => r.rps)).toFixed(3)}`);

await gateway.stop();
await backend.stop();
await rm(dir, { recursive: true, force: true });
