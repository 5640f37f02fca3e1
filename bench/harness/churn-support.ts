import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createRequire } from 'node:module';

/** What bench/endpoint-churn.ts and bench/route-churn.ts share: a backend and a load, each in its own process. */

/** A small-response keep-alive backend in its own process, so its work is not on the measured loop. */
export async function startTinyBackend(): Promise<{ port: number; child: ChildProcess }> {
  const child = spawn(
    process.execPath,
    [
      '-e',
      `const s=require('node:http').createServer((q,r)=>{r.writeHead(200,{'content-type':'text/plain','content-length':'2'});r.end('ok')});s.keepAliveTimeout=60000;s.listen(0,'127.0.0.1',()=>console.log(s.address().port))`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const [line] = (await once(child.stdout as NodeJS.ReadableStream, 'data')) as [Buffer];
  return { port: Number(line.toString().trim()), child };
}

const require = createRequire(import.meta.url);
const autocannonBin = require.resolve('autocannon/autocannon.js');

export interface ChildLoadResult {
  readonly rps: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  readonly errors: number;
}

/** autocannon in a child process against one Host and path: requests/s and latency over the run. */
export async function loadFromChild(options: {
  readonly port: number;
  readonly seconds: number;
  readonly connections: number;
  readonly host: string;
  readonly path?: string;
  /**
   * Requests per second across all connections (autocannon's overall rate); undefined: closed loop, each
   * connection sends its next request when the last one is answered (saturation, so latency is queueing).
   */
  readonly rate?: number;
}): Promise<ChildLoadResult> {
  const child = spawn(
    process.execPath,
    [
      autocannonBin,
      '-c',
      String(options.connections),
      '-d',
      String(options.seconds),
      ...(options.rate !== undefined ? ['-R', String(options.rate)] : []),
      '-H',
      `host=${options.host}`,
      '-j',
      `http://127.0.0.1:${options.port}${options.path ?? '/'}`,
    ],
    { stdio: ['ignore', 'pipe', 'ignore'] },
  );
  let out = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  await once(child, 'exit');
  const report = JSON.parse(out) as {
    requests: { average: number };
    latency: { p50: number; p99: number; max: number };
    errors: number;
    non2xx: number;
  };
  return {
    rps: Math.round(report.requests.average),
    p50Ms: report.latency.p50,
    p99Ms: report.latency.p99,
    maxMs: report.latency.max,
    errors: report.errors + report.non2xx,
  };
}
