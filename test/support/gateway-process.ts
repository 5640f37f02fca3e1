import { type ChildProcess, spawn } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { inject } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');

/**
 * A program of the compiled build the e2e run made (gateway-build.ts): `node builtProgram()` is what `npm start`
 * runs; `entry` names another one, e.g. `demo/echo/main.js`.
 */
export function builtProgram(entry = 'main.js'): string {
  return join(dirname(inject('gatewayMain')), entry);
}

/**
 * A port free on 127.0.0.1 a moment ago, chosen below the kernel's ephemeral range: between this choice and the
 * gateway's bind, every `listen(0)` on the machine (a demo's member API servers, backends, other tests) is handed
 * ephemeral ports only, so none can take this one (a readme walkthrough once lost its listener port that way).
 */
export async function freePort(): Promise<number> {
  const below = ephemeralRangeStart();
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = below > FIXED_PORTS_FROM + 1000 ? FIXED_PORTS_FROM + randomInt(below - FIXED_PORTS_FROM) : 0;
    const bound = await bindAndRelease(port);
    if (bound !== undefined) return bound;
  }
  throw new Error('no free port on 127.0.0.1');
}

const FIXED_PORTS_FROM = 10_000;

function ephemeralRangeStart(): number {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || 0;
  } catch {
    return 0;
  }
}

function bindAndRelease(port: number): Promise<number | undefined> {
  return new Promise((res) => {
    const server = createServer();
    server.once('error', () => res(undefined));
    server.listen(port, '127.0.0.1', () => {
      const bound = (server.address() as { port: number }).port;
      server.close(() => res(bound));
    });
  });
}

export interface GatewayProcess {
  /** The gateway's process id (a bench reads its CPU time from /proc). */
  readonly pid: number | undefined;
  readonly adminPort: number;
  readonly manifestsDir: string;
  readonly output: () => string;
  /** Replaces one manifest file atomically, as `kubectl apply` of that file would. */
  writeManifest(name: string, yaml: string): Promise<void>;
  adminGet(path: string): Promise<{ status: number; body: string }>;
  stop(): Promise<void>;
}

export interface StartOptions {
  readonly manifests: Readonly<Record<string, string>>;
  readonly listenerPortOffset?: number;
  readonly args?: readonly string[];
  /** What start waits for: /readyz 200 (default), or only the admin server (a gateway that is not ready yet). */
  readonly waitFor?: 'ready' | 'admin';
  /** How long start waits for that; default 45 s (a start on a loaded 2-core CI machine has taken 20). */
  readonly startTimeoutMs?: number;
}

/** Starts the compiled gateway as a user would (`npm start -- --manifests DIR ...`) and waits for /readyz. */
export async function startGateway(options: StartOptions): Promise<GatewayProcess> {
  const manifestsDir = await mkdtemp(join(tmpdir(), 'csgw-e2e-'));
  for (const [name, yaml] of Object.entries(options.manifests))
    await writeFile(join(manifestsDir, name), yaml);
  const adminPort = await freePort();
  const child: ChildProcess = spawn(
    process.execPath,
    [
      builtProgram(),
      '--manifests',
      manifestsDir,
      '--admin-port',
      String(adminPort),
      '--listener-port-offset',
      String(options.listenerPortOffset ?? 0),
      '--log-level',
      'warn',
      ...(options.args ?? []),
    ],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  let stopping = false;
  const exited = new Promise<number | null>((res) =>
    child.once('exit', (code, signal) => {
      // A gateway that dies under a test is the bug to see first, whatever the test then asserts.
      if (!stopping) process.stderr.write(`gateway exited (${code ?? signal}) during the test:\n${output}\n`);
      res(code);
    }),
  );

  const adminGet = async (path: string) => {
    const response = await fetch(`http://127.0.0.1:${adminPort}${path}`);
    return { status: response.status, body: await response.text() };
  };
  const startTimeoutMs = options.startTimeoutMs ?? 45_000;
  const deadline = Date.now() + startTimeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`gateway exited with ${child.exitCode}:\n${output}`);
    try {
      const { status } = await adminGet(options.waitFor === 'admin' ? '/healthz' : '/readyz');
      if (status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`gateway not ready within ${startTimeoutMs} ms:\n${output}`);
    }
    await new Promise((res) => setTimeout(res, 100));
  }

  return {
    pid: child.pid,
    adminPort,
    manifestsDir,
    output: () => output,
    adminGet,
    async writeManifest(name, yaml) {
      const tmp = join(manifestsDir, `.${name}.tmp`);
      await writeFile(tmp, yaml);
      const { rename } = await import('node:fs/promises');
      await rename(tmp, join(manifestsDir, name));
    },
    async stop() {
      stopping = true;
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
        await exited;
        clearTimeout(timer);
      }
      await rm(manifestsDir, { recursive: true, force: true });
    },
  };
}

/** Polls until `check` returns a value or the time runs out; the last error explains the failure. */
export async function eventually<T>(check: () => Promise<T>, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      return await check();
    } catch (error) {
      lastError = error;
      await new Promise((res) => setTimeout(res, 50));
    }
  }
  throw lastError;
}
