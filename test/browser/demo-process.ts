import { type ChildProcess, spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { builtProgram, freePort } from '../support/gateway-process.ts';

const ROOT = resolve(import.meta.dirname, '../..');
/** The demo Gateway's listener port before the offset (src/app/source-setup.ts). */
const DEMO_GATEWAY_PORT = 8080;

export interface DemoProcess {
  readonly adminUrl: string;
  /** The demo Gateway's HTTP listener. */
  readonly webUrl: string;
  readonly output: () => string;
  adminPost(path: string): Promise<string>;
  stop(): Promise<void>;
}

/** `npm start` as a newcomer runs it (the built-in demo), on free ports, waiting for /readyz. */
export async function startDemo(
  extraArgs: readonly string[] = [],
): Promise<DemoProcess & { readonly eastWestPort: number }> {
  const eastWestPort = await freePort();
  const program = await startProgram(['--demo', '--east-west-port', String(eastWestPort), ...extraArgs]);
  return Object.assign(program, { eastWestPort });
}

/** The program with these flags and a free admin port; a Gateway listener on 8080 is served at `webUrl`. */
export async function startProgram(
  args: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<DemoProcess> {
  const adminPort = await freePort();
  const listenerPort = await freePort();
  const child: ChildProcess = spawn(
    process.execPath,
    [
      builtProgram(),
      '--admin-port',
      String(adminPort),
      '--listener-port-offset',
      String(listenerPort - DEMO_GATEWAY_PORT),
      '--log-level',
      'warn',
      ...args,
    ],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env },
  );
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<void>((res) => child.once('exit', () => res()));
  const adminUrl = `http://127.0.0.1:${adminPort}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`gateway exited with ${child.exitCode}:\n${output}`);
    const ready = await fetch(`${adminUrl}/readyz`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ready) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`gateway not ready within 60s:\n${output}`);
    }
    await new Promise((res) => setTimeout(res, 100));
  }
  return {
    adminUrl,
    webUrl: `http://127.0.0.1:${listenerPort}`,
    output: () => output,
    async adminPost(path) {
      const response = await fetch(`${adminUrl}${path}`, { method: 'POST' });
      const body = await response.text();
      if (response.status !== 200) throw new Error(`POST ${path}: ${response.status} ${body}`);
      return body;
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Sends GETs one after another until stopped, as a steady trickle of users would; counts the answers. */
export function steadyLoad(url: string): { readonly statuses: Map<number, number>; stop(): Promise<void> } {
  const statuses = new Map<number, number>();
  let running = true;
  const loop = (async () => {
    while (running) {
      const status = await fetch(url).then(
        async (r) => {
          await r.arrayBuffer();
          return r.status;
        },
        () => 0,
      );
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      await new Promise((res) => setTimeout(res, 10));
    }
  })();
  return {
    statuses,
    async stop() {
      running = false;
      await loop;
    },
  };
}
