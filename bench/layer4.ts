import { createSocket } from 'node:dgram';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { hasCommand, pinSelf, planCpus } from './harness/affinity.ts';
import { freePorts } from './harness/ports.ts';
import { type BenchProcess, spawnPinned, treeCpuSeconds, waitForHttp } from './harness/processes.ts';

/**
 * Layer 4 (issue 44): TCP connection rate, TCP bulk throughput and UDP datagrams per second through
 * clusterset-gateway (a TCPRoute and a UDPRoute), haproxy (`mode tcp`; no UDP) and nginx (`stream`, TCP and
 * UDP), each pinned to one core, against the same backends, in one run; direct to the backends for the ceiling.
 * The backends and the load run in this process on the other core(s), so _direct_ is bounded by them.
 *
 * Usage: node --import tsx bench/layer4.ts [--duration 3] [--out bench/results/layer4.md] [--baseline <main.js>]
 * (`--baseline`: another build of the gateway, e.g. main's dist/main.js, measured in the same run).
 */
const ROOT = resolve(import.meta.dirname, '..');
const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '3' },
    out: { type: 'string', default: 'bench/results/layer4.md' },
    baseline: { type: 'string' },
  },
});
const DURATION_MS = Number(values.duration) * 1_000;
const CONCURRENCY = 50;
const CHUNK = Buffer.alloc(64 * 1024, 7);

interface Ports {
  readonly echo: number;
  readonly sink: number;
  readonly udp: number;
}

async function startBackends(): Promise<{ ports: Ports; sunk: () => number; close: () => void }> {
  const [echoPort, sinkPort, udpPort] = await freePorts(3);
  let sunk = 0;
  const echo = createServer({ noDelay: true }, (s) => {
    s.on('error', () => s.destroy());
    s.pipe(s);
  });
  const sink = createServer((s) => {
    s.on('error', () => s.destroy());
    s.on('data', (chunk: Buffer) => {
      sunk += chunk.length;
    });
    s.on('end', () => s.end());
  });
  const udp = createSocket('udp4');
  udp.on('message', (msg, rinfo) => udp.send(msg, rinfo.port, rinfo.address));
  await Promise.all([
    listen(echo, echoPort as number),
    listen(sink, sinkPort as number),
    new Promise<void>((r) => udp.bind(udpPort, '127.0.0.1', r)),
  ]);
  return {
    ports: { echo: echoPort as number, sink: sinkPort as number, udp: udpPort as number },
    sunk: () => sunk,
    close: () => {
      echo.close();
      sink.close();
      udp.close();
    },
  };
}

function listen(server: Server, port: number): Promise<void> {
  return new Promise((r) => server.listen(port, '127.0.0.1', 4096, r));
}

/** New connections per second: connect, one line each way, close; CONCURRENCY loops. */
async function connectionRate(port: number): Promise<number> {
  const end = Date.now() + DURATION_MS;
  let done = 0;
  let failed = 0;
  let lastError = '';
  const once = () =>
    new Promise<void>((res) => {
      const s = connect({ host: '127.0.0.1', port, noDelay: true });
      s.on('connect', () => s.write('ping\n'));
      s.once('data', () => {
        done++;
        s.destroy();
        res();
      });
      s.on('error', (error) => {
        failed++;
        lastError = error.message;
        res();
      });
    });
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (Date.now() < end) await once();
    }),
  );
  if (failed > done / 100) throw new Error(`${failed} failed connections (${lastError})`);
  return done / (DURATION_MS / 1_000);
}

/** MB/s into the sink over 4 connections writing 64 KiB chunks as fast as the sockets take them. */
async function bulk(port: number, sunk: () => number): Promise<number> {
  const before = sunk();
  const end = Date.now() + DURATION_MS;
  await Promise.all(
    Array.from(
      { length: 4 },
      () =>
        new Promise<void>((res) => {
          const s = connect({ host: '127.0.0.1', port });
          s.on('error', () => res());
          const pump = (): void => {
            while (Date.now() < end) if (!s.write(CHUNK)) return void s.once('drain', pump);
            s.destroy();
            res();
          };
          s.on('connect', pump);
        }),
    ),
  );
  await new Promise((r) => setTimeout(r, 200));
  return (sunk() - before) / 1e6 / (DURATION_MS / 1_000);
}

/** Datagrams answered per second: CONCURRENCY client sockets, each one datagram in flight (closed loop). */
async function datagrams(port: number): Promise<number> {
  const end = Date.now() + DURATION_MS;
  let answered = 0;
  let lost = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      const s = createSocket('udp4');
      await new Promise<void>((r) => s.bind(0, '127.0.0.1', r));
      const payload = Buffer.from('gateway-api-conformance-udp-echo');
      while (Date.now() < end) {
        const ok = await new Promise<boolean>((res) => {
          const timer = setTimeout(() => res(false), 200);
          s.once('message', () => {
            clearTimeout(timer);
            res(true);
          });
          s.send(payload, port, '127.0.0.1');
        });
        if (ok) answered++;
        else {
          lost++;
          s.removeAllListeners('message');
        }
      }
      s.close();
    }),
  );
  if (lost > answered / 100) throw new Error(`${lost} of ${answered + lost} datagrams unanswered`);
  return answered / (DURATION_MS / 1_000);
}

interface Peer {
  readonly name: string;
  readonly ports: Ports | undefined;
  readonly note?: string;
  /** CPU seconds the proxy's process tree has used so far. */
  cpuSeconds(): number | undefined;
  stop(): Promise<void>;
}

async function startPeer(
  name: string,
  backends: Ports,
  cpus: string,
  scratch: string,
): Promise<Peer | { name: string; skip: string }> {
  const [echo, sink, udp] = await freePorts(3);
  const ports = { echo: echo as number, sink: sink as number, udp: udp as number };
  let proc: BenchProcess;
  let admin: number | undefined;
  const gatewayMain = name === BASELINE ? values.baseline : join(ROOT, 'dist/main.js');
  if (name === 'clusterset-gateway' || name === BASELINE) {
    const dir = mkdtempSync(join(scratch, 'gw-'));
    writeFileSync(join(dir, 'l4.yaml'), gatewayManifests(ports, backends));
    [admin] = await freePorts(1);
    proc = spawnPinned(
      name,
      process.execPath,
      [gatewayMain as string, '--manifests', dir, '--admin-port', String(admin), '--log-level', 'warn'],
      { cpus, cwd: ROOT },
    );
  } else if (name === 'haproxy') {
    if (!hasCommand('haproxy')) return { name, skip: 'haproxy not installed' };
    const file = join(scratch, 'haproxy.cfg');
    writeFileSync(
      file,
      `global\n  nbthread 1\n  maxconn 4000\ndefaults\n  mode tcp\n  timeout connect 5s\n  timeout client 60s\n  timeout server 60s\n` +
        `listen echo\n  bind 127.0.0.1:${ports.echo}\n  server b 127.0.0.1:${backends.echo}\n` +
        `listen sink\n  bind 127.0.0.1:${ports.sink}\n  server b 127.0.0.1:${backends.sink}\n`,
    );
    proc = spawnPinned(name, 'haproxy', ['-f', file, '-db'], { cpus });
  } else {
    if (!hasCommand('nginx')) return { name, skip: 'nginx not installed' };
    const module = '/usr/lib/nginx/modules/ngx_stream_module.so';
    const file = join(scratch, 'nginx.conf');
    writeFileSync(
      file,
      `${existsSync(module) ? `load_module ${module};\n` : ''}daemon off;\nworker_processes 1;\npid ${scratch}/nginx.pid;\nerror_log ${scratch}/nginx.err;\n` +
        `events { worker_connections 20000; }\nstream {\n` +
        `  server { listen 127.0.0.1:${ports.echo}; proxy_pass 127.0.0.1:${backends.echo}; }\n` +
        `  server { listen 127.0.0.1:${ports.sink}; proxy_pass 127.0.0.1:${backends.sink}; }\n` +
        `  server { listen 127.0.0.1:${ports.udp} udp; proxy_pass 127.0.0.1:${backends.udp}; proxy_responses 1; proxy_timeout 5s; }\n}\n`,
    );
    proc = spawnPinned(name, 'nginx', ['-c', file], { cpus });
  }
  if (admin !== undefined) {
    const ready = await waitForHttp(`http://127.0.0.1:${admin}/readyz`, proc, 30_000);
    if (!ready.ok) return { name, skip: ready.reason };
  }
  await new Promise((r) => setTimeout(r, 1_000));
  if (proc.exited) return { name, skip: proc.describeExit() };
  return {
    name,
    ports: name === 'haproxy' ? { ...ports, udp: 0 } : ports,
    cpuSeconds: () => treeCpuSeconds(proc.pid),
    stop: () => proc.stop(),
  };
}

const BASELINE = 'clusterset-gateway (baseline)';

function gatewayManifests(ports: Ports, backends: Ports): string {
  const svc = (n: string, protocol: string) =>
    `apiVersion: v1\nkind: Service\nmetadata: { name: ${n}, namespace: bench }\nspec:\n  ports: [{ name: main, protocol: ${protocol}, port: 9 }]\n---\n` +
    `apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: { name: ${n}-1, namespace: bench, labels: { kubernetes.io/service-name: ${n} } }\naddressType: IPv4\n` +
    `ports: [{ name: main, protocol: ${protocol}, port: ${backends[n as keyof Ports]} }]\nendpoints: [{ addresses: [127.0.0.1], conditions: { ready: true } }]\n---\n`;
  const route = (kind: string, n: string) =>
    `apiVersion: gateway.networking.k8s.io/v1\nkind: ${kind}\nmetadata: { name: ${n}, namespace: bench }\nspec:\n  parentRefs: [{ name: l4, sectionName: ${n} }]\n  rules: [{ backendRefs: [{ name: ${n}, port: 9 }] }]\n---\n`;
  return (
    `apiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\nmetadata: { name: bench }\nspec: { controllerName: clusterset-gateway.io/gateway-controller }\n---\n` +
    `apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: { name: l4, namespace: bench }\nspec:\n  gatewayClassName: bench\n  listeners:\n` +
    `    - { name: echo, protocol: TCP, port: ${ports.echo} }\n    - { name: sink, protocol: TCP, port: ${ports.sink} }\n    - { name: udp, protocol: UDP, port: ${ports.udp} }\n---\n` +
    svc('echo', 'TCP') +
    svc('sink', 'TCP') +
    svc('udp', 'UDP') +
    route('TCPRoute', 'echo') +
    route('TCPRoute', 'sink') +
    route('UDPRoute', 'udp')
  );
}

async function main(): Promise<void> {
  const plan = planCpus();
  pinSelf(plan);
  const scratch = mkdtempSync(join(tmpdir(), 'csgw-l4-bench-'));
  const backends = await startBackends();
  const rows: string[] = [];
  const measure = async (name: string, ports: Ports, cpuSeconds: () => number | undefined) => {
    const rate = await connectionRate(ports.echo);
    const cpuBefore = cpuSeconds();
    const mbps = await bulk(ports.sink, backends.sunk);
    const cpuAfter = cpuSeconds();
    const busy = cpuBefore === undefined || cpuAfter === undefined ? 0 : cpuAfter - cpuBefore;
    const perCore = busy > 0 ? `${Math.round((mbps * (DURATION_MS / 1_000)) / busy)}` : '–';
    const dgrams = ports.udp === 0 ? undefined : await datagrams(ports.udp);
    rows.push(
      `| ${name} | ${Math.round(rate)} | ${Math.round(mbps)} | ${perCore} | ${dgrams === undefined ? '— (no UDP)' : Math.round(dgrams)} |`,
    );
    process.stderr.write(`${rows.at(-1)}\n`);
  };
  await measure('direct', backends.ports, () => undefined);
  const names = ['clusterset-gateway', ...(values.baseline ? [BASELINE] : []), 'haproxy', 'nginx'];
  for (const name of names) {
    const peer = await startPeer(name, backends.ports, plan.proxyCpus, scratch);
    if ('skip' in peer) {
      rows.push(`| ${name} | skipped: ${peer.skip} | | | |`);
      continue;
    }
    try {
      await measure(name, peer.ports as Ports, peer.cpuSeconds);
    } catch (error) {
      rows.push(`| ${name} | failed: ${(error as Error).message} | | | |`);
    } finally {
      await peer.stop();
    }
  }
  backends.close();
  const report =
    `# Layer 4 bench (${new Date().toISOString().slice(0, 10)})\n\n` +
    `\`node --import tsx bench/layer4.ts --duration ${values.duration}\`; ${plan.note}. Each proxy on one core ` +
    `(gateway: one process; haproxy \`nbthread 1\`; nginx 1 worker, \`stream\`). Backends and load share the other core(s), ` +
    `so _direct_ is their ceiling, not a proxy's. ${CONCURRENCY} concurrent connections or UDP client sockets; ` +
    `bulk is 4 connections writing 64 KiB chunks into a sink; per proxy core: the bulk MB divided by the CPU seconds ` +
    `the proxy used meanwhile (the load core bounds MB/s, not the proxy). Load average at the end: ` +
    `${loadavg()[0]?.toFixed(1)}. Reported, never asserted.\n\n` +
    `| config | TCP connections/s (connect, one line each way, close) | TCP bulk MB/s | TCP bulk MB/s per proxy core | UDP datagrams/s (answered, ${CONCURRENCY} flows, closed loop) |\n` +
    `| --- | --- | --- | --- | --- |\n${rows.join('\n')}\n`;
  writeFileSync(resolve(ROOT, values.out as string), report);
  process.stdout.write(report);
  process.exit(0);
}

await main();
