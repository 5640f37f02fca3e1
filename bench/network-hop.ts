/**
 * The cost of the extra hop through another network's gateway (issue 41), three paths to one echo pod side by
 * side, taking turns in each round:
 *
 * - `direct`: the load generator to the pod itself (what the pod and the loader can do: the ceiling);
 * - `gateway`: through gateway east, the pod on east's own network (`direct.example`: cluster south, dialled);
 * - `network gateway`: through gateway east and then gateway west's network gateway (`tunnel.example`: cluster
 *   west on net-west, HTTP/1.1 inside CONNECT streams on one mutual-TLS HTTP/2 session).
 *
 * The pod and both gateways are child processes; autocannon runs in this one. Each row gives req/s, p50 and p99,
 * the CPU the gateway processes used during the run (from /proc: user + system time over wall time, in cores),
 * and req/s per gateway core: the cost of a request in CPU, which a loaded machine disturbs far less than req/s
 * or latency. The tunnel row's CPU is both gateways'. Reported, never asserted.
 *
 *   timeout 300 node --import tsx bench/network-hop.ts [--seconds 8] [--rounds 2] [--connections 50]
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { freePort, startGateway } from '../test/support/gateway-process.ts';
import {
  gateway,
  gatewayClass,
  httpRoute,
  importedSlice,
  serviceImport,
  yamlDocs,
} from '../test/support/manifests.ts';
import { identityFiles, makeTrustDomain, networkTlsArgs } from '../test/support/network-certs.ts';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '8' },
    rounds: { type: 'string', default: '2' },
    connections: { type: 'string', default: '50' },
  },
});
const ROOT = resolve(import.meta.dirname, '..');
const NS = 'bench';
const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** CPU seconds (user + system) a process has used so far; undefined without /proc. */
function cpuSeconds(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}

async function startPod(): Promise<{ child: ChildProcess; port: number }> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'src/demo/echo/main.ts', '--port', String(port), '--namespace', NS, '--pod', 'web-0'],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  await new Promise<void>((done, fail) => {
    child.stdout?.once('data', () => done());
    child.once('exit', (code) => fail(new Error(`echo pod exited with ${code}`)));
  });
  return { child, port };
}

const dir = mkdtempSync(join(tmpdir(), 'csgw-hop-'));
makeTrustDomain(dir, 'bench.local', ['east', 'west']);
const pod = await startPod();
const [httpPort, eastNet, westNet] = [await freePort(), await freePort(), await freePort()];
const slice = (name: string, service: string, cluster: string) =>
  importedSlice(name, service, NS, cluster, { port: pod.port, pod: 'web-0' });
const profile = (cluster: string, network: string, gatewayPort: number) => ({
  apiVersion: 'multicluster.x-k8s.io/v1alpha1',
  kind: 'ClusterProfile',
  metadata: { name: cluster, namespace: 'fleet' },
  spec: { displayName: cluster, clusterManager: { name: 'bench' } },
  status: {
    properties: [
      { name: 'network.clusterset-gateway.io', value: network },
      { name: 'network-gateways.clusterset-gateway.io', value: `127.0.0.1:${gatewayPort}` },
    ],
  },
});
const routeTo = (name: string, host: string) =>
  httpRoute(name, NS, {
    parentRefs: [{ name: 'edge' }],
    hostnames: [host],
    rules: [{ backendRefs: [{ group: 'multicluster.x-k8s.io', kind: 'ServiceImport', name, port: 80 }] }],
  });
const common = ['--no-health-checks', '--log-level', 'error'];
const east = await startGateway({
  args: [
    '--cluster',
    'east',
    '--network',
    'net-east',
    '--network-gateway-port',
    String(eastNet),
    ...networkTlsArgs(identityFiles(dir, 'east')),
    ...common,
  ],
  manifests: {
    'bench.yaml': yamlDocs(
      gatewayClass(),
      gateway('edge', NS, [{ name: 'http', protocol: 'HTTP', port: httpPort }]),
      serviceImport('direct', NS),
      serviceImport('tunnel', NS),
      routeTo('direct', 'direct.example'),
      routeTo('tunnel', 'tunnel.example'),
      slice('direct-south', 'direct', 'south'),
      slice('tunnel-west', 'tunnel', 'west'),
      profile('south', 'net-east', eastNet),
      profile('west', 'net-west', westNet),
    ),
  },
});
const west = await startGateway({
  args: [
    '--cluster',
    'west',
    '--network',
    'net-west',
    '--network-gateway-port',
    String(westNet),
    ...networkTlsArgs(identityFiles(dir, 'west')),
    ...common,
  ],
  manifests: { 'bench.yaml': yamlDocs(serviceImport('tunnel', NS), slice('tunnel-west', 'tunnel', 'west')) },
});

interface Case {
  readonly name: string;
  readonly port: number;
  readonly host: string;
  /** The gateway processes this path crosses: their CPU is the cost. */
  readonly pids: readonly (number | undefined)[];
}
const cases: Case[] = [
  { name: 'direct', port: pod.port, host: 'web.example', pids: [] },
  { name: 'gateway', port: httpPort, host: 'direct.example', pids: [east.pid] },
  { name: 'network gateway', port: httpPort, host: 'tunnel.example', pids: [east.pid, west.pid] },
];

interface Result {
  readonly rps: number;
  readonly p50: number;
  readonly p99: number;
  readonly errors: number;
  /** Cores the path's gateways used on average; undefined for `direct` or without /proc. */
  readonly cores: number | undefined;
}

async function run(c: Case, seconds: number): Promise<Result> {
  const cpu = () =>
    c.pids.reduce<number | undefined>((sum, pid) => {
      const s = cpuSeconds(pid);
      return sum === undefined || s === undefined ? undefined : sum + s;
    }, 0);
  const cpuBefore = cpu();
  const started = performance.now();
  const result = await autocannon({
    url: `http://127.0.0.1:${c.port}/`,
    connections: Number(values.connections),
    duration: seconds,
    headers: { host: c.host },
  });
  const wall = (performance.now() - started) / 1000;
  const cpuAfter = cpu();
  const cores =
    c.pids.length === 0 || cpuBefore === undefined || cpuAfter === undefined
      ? undefined
      : (cpuAfter - cpuBefore) / wall;
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.non2xx,
    cores,
  };
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};
const perCore = (r: Result) => (r.cores === undefined || r.cores === 0 ? undefined : r.rps / r.cores);
const fmt = (n: number | undefined, digits = 0) =>
  n === undefined ? '-' : n.toLocaleString('en-US', { maximumFractionDigits: digits });

try {
  for (const c of cases) await run(c, 2); // warm-up: JIT, pools, the tunnel session
  const results = new Map<string, Result[]>(cases.map((c) => [c.name, []]));
  for (let round = 1; round <= Number(values.rounds); round++) {
    for (const c of cases) {
      const r = await run(c, Number(values.seconds));
      results.get(c.name)!.push(r);
      console.log(
        `round ${round} ${c.name.padEnd(16)} ${fmt(r.rps).padStart(7)} req/s  p50 ${r.p50} ms  p99 ${r.p99} ms  ` +
          `gateway cores ${fmt(r.cores, 2)}  req/s per core ${fmt(perCore(r))}  errors ${r.errors}`,
      );
    }
  }
  console.log(
    `\nmedians of ${values.rounds} rounds x ${values.seconds} s, ${values.connections} connections; ` +
      `load average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')} on ${availableParallelism()} cores, Node ${process.versions.node}\n`,
  );
  console.log('| path | req/s | p50 ms | p99 ms | gateway cores | req/s per gateway core | errors |');
  console.log('| --- | --: | --: | --: | --: | --: | --: |');
  const summary = new Map<string, { rps: number; p99: number; perCore: number | undefined }>();
  for (const c of cases) {
    const rs = results.get(c.name)!;
    const cores = rs.every((r) => r.cores !== undefined) ? median(rs.map((r) => r.cores!)) : undefined;
    const pcs = rs.map(perCore);
    const pc = pcs.every((x) => x !== undefined) ? median(pcs as number[]) : undefined;
    const row = { rps: median(rs.map((r) => r.rps)), p99: median(rs.map((r) => r.p99)), perCore: pc };
    summary.set(c.name, row);
    console.log(
      `| ${c.name} | ${fmt(row.rps)} | ${median(rs.map((r) => r.p50))} | ${row.p99} | ${fmt(cores, 2)} | ` +
        `${fmt(pc)} | ${rs.reduce((n, r) => n + r.errors, 0)} |`,
    );
  }
  const plain = summary.get('gateway')!;
  const hop = summary.get('network gateway')!;
  console.log(
    `\nthe extra hop: req/s per gateway core x${fmt(
      plain.perCore && hop.perCore ? hop.perCore / plain.perCore : undefined,
      2,
    )}, req/s x${fmt(hop.rps / plain.rps, 2)}, p99 ${hop.p99 - plain.p99 >= 0 ? '+' : ''}${hop.p99 - plain.p99} ms`,
  );
} finally {
  await east.stop();
  await west.stop();
  pod.child.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
}
