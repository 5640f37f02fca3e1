/**
 * CPU cost of active health checks (issue 10): the gateway's HealthChecker with its defaults (TCP connect
 * every 2 s ± 10 %, timeout 1 s) probing 1,000 and 10,000 endpoints, results fed into a real balancer factory.
 * The endpoints are listeners on 127.0.0.1 in a child process, so their accept cost is not counted here.
 * Reported: CPU of this process (user + system) as a percentage of one core, probes per second, and the
 * same process idle for comparison.
 *
 *   node --import tsx bench/health-check-cost.bench.ts [--seconds 20] [--endpoints 1000,10000]
 */
import { type ChildProcess, fork } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import { DEFAULT_HEALTH_CHECK_OPTIONS, HealthChecker } from '../src/health-check/health-checker.ts';
import type { BackendCluster } from '../src/ir/route-table.ts';
import { createBalancerFactory } from '../src/lb/index.ts';

if (process.argv[2] === 'serve') {
  const count = Number(process.argv[3]);
  const servers: Server[] = [];
  const ports: number[] = [];
  const next = (): void => {
    if (servers.length === count) {
      process.send?.(ports);
      return;
    }
    const server = createServer((socket) => {
      socket.on('error', () => {});
      socket.end();
    });
    server.listen(0, '127.0.0.1', 4096, () => {
      const address = server.address();
      ports.push(typeof address === 'object' && address ? address.port : 0);
      next();
    });
    servers.push(server);
  };
  next();
} else {
  await main();
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      seconds: { type: 'string', default: '20' },
      endpoints: { type: 'string', default: '1000,10000' },
    },
  });
  const seconds = Number(values.seconds);
  const sizes = values.endpoints.split(',').map(Number);
  console.log(
    `node ${process.version}, ${cpus()[0]?.model ?? 'unknown CPU'} x${cpus().length}, ${seconds} s each`,
  );
  console.log(`idle process: ${(await measure(seconds, () => {})).cpuPercent.toFixed(2)}% of one core`);
  console.log('| endpoints | probe budget | probes/s | probe success | CPU, % of one core |');
  console.log('| --------: | -----------: | -------: | ------------: | -----------------: |');
  const budgets = [DEFAULT_HEALTH_CHECK_OPTIONS.maxProbesPerSecond, 0];
  for (const size of sizes) for (const budget of budgets) await run(size, budget, seconds);
}

async function run(size: number, maxProbesPerSecond: number, seconds: number): Promise<void> {
  {
    const { child, ports } = await listeners(size);
    const factory = createBalancerFactory();
    const cluster: BackendCluster = {
      id: 'ServiceImport/bench/web:80',
      kind: 'ServiceImport',
      namespace: 'bench',
      name: 'web',
      port: 80,
      protocol: 'http1',
      trafficDistribution: 'Default',
      tiers: [
        ports.map((port) => ({
          key: `127.0.0.1:${port}`,
          address: '127.0.0.1',
          port,
          cluster: 'east',
          ready: true,
          weight: 1,
        })),
      ],
    };
    factory.build(cluster);
    let probes = 0;
    let successes = 0;
    const checker = new HealthChecker(
      { ...DEFAULT_HEALTH_CHECK_OPTIONS, maxProbesPerSecond },
      {
        result: (ids, key, ok, kind) => {
          for (const id of ids) factory.recordProbe(id, key, ok, kind);
        },
        counted: (result) => {
          probes++;
          if (result === 'success') successes++;
        },
      },
    );
    checker.apply({ [cluster.id]: cluster });
    // First probes are spread over the (stretched) interval, so the rate is steady after a short warm-up.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const budget = maxProbesPerSecond > 0 ? `${maxProbesPerSecond}/s` : 'none';
    const before = probes;
    const beforeOk = successes;
    const { cpuPercent } = await measure(seconds, () => {});
    const done = probes - before;
    checker.close();
    child.kill();
    console.log(
      `| ${size.toLocaleString('en')} | ${budget} | ${Math.round(done / seconds)} | ${((100 * (successes - beforeOk)) / Math.max(1, done)).toFixed(1)}% | ${cpuPercent.toFixed(1)}% |`,
    );
  }
}

async function measure(seconds: number, during: () => void): Promise<{ cpuPercent: number }> {
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  during();
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  const used = process.cpuUsage(cpu);
  const wallUs = Number(process.hrtime.bigint() - start) / 1000;
  return { cpuPercent: (100 * (used.user + used.system)) / wallUs };
}

function listeners(count: number): Promise<{ child: ChildProcess; ports: number[] }> {
  const child = fork(new URL(import.meta.url).pathname, ['serve', String(count)], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    child.once('message', (ports) => resolve({ child, ports: ports as number[] }));
    child.once('exit', (code) => reject(new Error(`listener process exited with ${code}`)));
  });
}
