import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../support/gateway-process.ts';

/**
 * Issue 42, "One process tree": `npm start` is npm → sh → node dist/main.js → the demo's world. A signal to npm,
 * npm killed outright, or the gateway killed outright: whatever ends, nothing of the tree stays behind holding a
 * port. Real npm, real processes, found through /proc.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const DEMO_GATEWAY_PORT = 8080;
const DRAIN_MS = 3000;
/** The drain, the world's stop and the parent poll, with room for a loaded machine. */
const GONE_WITHIN_MS = DRAIN_MS + 12_000;

interface NpmStart {
  readonly npm: ChildProcess;
  readonly ports: readonly number[];
  readonly adminUrl: string;
  readonly output: () => string;
}

const started: NpmStart[] = [];

async function npmStart(npmArgs: readonly string[] = []): Promise<NpmStart> {
  const [adminPort, webPort, eastWestPort] = [await freePort(), await freePort(), await freePort()];
  const npm = spawn(
    'npm',
    [
      'start',
      ...npmArgs,
      '--',
      '--admin-port',
      String(adminPort),
      '--listener-port-offset',
      String(webPort - DEMO_GATEWAY_PORT),
      '--east-west-port',
      String(eastWestPort),
      '--drain-timeout-ms',
      String(DRAIN_MS),
      '--log-level',
      'info',
    ],
    // Its own process group: the test's clean-up can reach whatever a failing run leaves behind.
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], detached: true },
  );
  let output = '';
  npm.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  npm.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const run: NpmStart = {
    npm,
    ports: [adminPort, webPort, eastWestPort],
    adminUrl: `http://127.0.0.1:${adminPort}`,
    output: () => output,
  };
  started.push(run);
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (npm.exitCode !== null) throw new Error(`npm start exited with ${npm.exitCode}:\n${output}`);
    const ready = await fetch(`${run.adminUrl}/readyz`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ready && output.includes('pods and member clusters run in process')) return run;
    if (Date.now() > deadline) throw new Error(`npm start not ready within 120s:\n${output}`);
    await new Promise((res) => setTimeout(res, 200));
  }
}

/** Every process below `root`, by the parent links in /proc. */
function descendants(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const parent = parentOf(Number(name));
    if (parent !== undefined) children.set(parent, [...(children.get(parent) ?? []), Number(name)]);
  }
  const found: number[] = [];
  const visit = (pid: number): void => {
    for (const child of children.get(pid) ?? []) {
      found.push(child);
      visit(child);
    }
  };
  visit(root);
  return found;
}

function parentOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

/** Gone, or a zombie nobody has reaped yet: either way it runs no more and holds no port. */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
}

function bindable(port: number): Promise<boolean> {
  return new Promise((done) => {
    const server = createServer();
    server.once('error', () => done(false));
    server.listen(port, '127.0.0.1', () => server.close(() => done(true)));
  });
}

async function until(what: string, condition: () => boolean | Promise<boolean>, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`still waiting after ${ms} ms: ${what}`);
    await new Promise((res) => setTimeout(res, 100));
  }
}

/** The tree under npm: the gateway and its world (named by the banner), and what is between them and npm. */
function tree(run: NpmStart): { all: number[]; gateway: number; world: number } {
  const match = /pods and member clusters run in process (\d+), the gateway in (\d+)/.exec(run.output());
  if (!match) throw new Error(`no process line in the banner:\n${run.output()}`);
  const all = descendants(run.npm.pid!);
  const [world, gateway] = [Number(match[1]), Number(match[2])];
  expect(all).toEqual(expect.arrayContaining([gateway, world]));
  expect(commandOf(gateway)).toContain('dist/main.js');
  return { all, gateway, world };
}

async function expectNothingLeft(run: NpmStart, pids: readonly number[]): Promise<void> {
  await until(
    `the processes of the tree to end: ${pids.filter(running).map((pid) => `${pid} ${commandOf(pid)}`)}`,
    () => pids.every((pid) => !running(pid)),
    GONE_WITHIN_MS,
  );
  for (const port of run.ports) expect(await bindable(port), `port ${port} still bound`).toBe(true);
}

describe('npm start is one process tree', () => {
  afterEach(() => {
    // A failing run must not leave a demo behind: the whole process group, npm's and everything it started.
    for (const run of started.splice(0)) {
      try {
        process.kill(-run.npm.pid!, 'SIGKILL');
      } catch {}
    }
  });

  it('SIGTERM to npm: the gateway drains, the world follows, npm exits, no port stays bound', async () => {
    const run = await npmStart();
    const { all } = tree(run);
    const exited = new Promise<number | null>((res) => run.npm.once('exit', (code) => res(code)));
    run.npm.kill('SIGTERM');
    await expectNothingLeft(run, [run.npm.pid!, ...all]);
    // npm waited for its script, which drained and exited by itself (0), not killed by the signal.
    expect(await exited).toBe(0);
  }, 180_000);

  it('npm killed outright: the gateway sees its parent gone and drains; the world follows', async () => {
    const run = await npmStart(['--ignore-scripts']);
    const { all } = tree(run);
    run.npm.kill('SIGKILL');
    await expectNothingLeft(run, all);
    // It drained as on SIGTERM (the log is on the pipe npm shared with it), not killed.
    expect(run.output()).toMatch(/"signal":"parent exited".*"msg":"shutting down"/);
  }, 180_000);

  it('the gateway killed outright: the world exits by itself, and the next start removes what was left', async () => {
    const first = await npmStart(['--ignore-scripts']);
    const { all, gateway } = tree(first);
    const hub = /hub manifests: (\S+)/.exec(first.output())?.[1];
    expect(hub).toBeDefined();
    process.kill(gateway, 'SIGKILL');
    await expectNothingLeft(first, [first.npm.pid!, ...all]);
    // The killed gateway could not remove its hub folder; the next demo does.
    expect(existsSync(hub!)).toBe(true);
    const second = await npmStart(['--ignore-scripts']);
    expect(existsSync(hub!)).toBe(false);
    const next = tree(second);
    second.npm.kill('SIGTERM');
    await expectNothingLeft(second, [second.npm.pid!, ...next.all]);
  }, 240_000);
});
