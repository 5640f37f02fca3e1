import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { setTimeout as sleep } from 'node:timers/promises';
import { pinnedArgv } from './affinity.ts';

/** Every process the bench started and that still runs: stopped if the bench itself is interrupted. */
const live = new Set<BenchProcess>();
let signalsHooked = false;

/**
 * Ctrl-C (or a SIGTERM) to `npm run bench` must not leave nginx, haproxy and the proxies running: their
 * process groups get SIGTERM before the bench exits.
 */
function stopAllOnSignal(): void {
  if (signalsHooked) return;
  signalsHooked = true;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      for (const child of live) signalGroup(child.pid, 'SIGTERM');
      process.stderr.write(`\n${signal}: stopped ${live.size} bench process(es)\n`);
      process.exit(signal === 'SIGINT' ? 130 : 143);
    });
  }
}

/** A process the bench started: its output tail for error messages, and a stop that always finishes. */
export class BenchProcess {
  readonly #child: ChildProcess;
  readonly #tail: string[] = [];
  readonly #lineListeners: ((line: string) => void)[] = [];
  #exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  readonly #exited: Promise<void>;

  readonly #scratchDir: string | undefined;

  constructor(
    readonly name: string,
    child: ChildProcess,
    scratchDir?: string,
  ) {
    this.#child = child;
    this.#scratchDir = scratchDir;
    live.add(this);
    stopAllOnSignal();
    const keep = (line: string): void => {
      if (line.trim() === '') return;
      for (const listener of this.#lineListeners) listener(line);
      this.#tail.push(line);
      if (this.#tail.length > 30) this.#tail.shift();
    };
    for (const stream of [child.stdout, child.stderr]) {
      // Lines are cut wherever a pipe read ends: carry the unfinished one over to the next chunk.
      let partial = '';
      stream?.on('data', (chunk: Buffer) => {
        const lines = (partial + chunk.toString('utf8')).split('\n');
        partial = lines.pop() ?? '';
        for (const line of lines) keep(line);
      });
      stream?.on('end', () => keep(partial));
    }
    this.#exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.#exit = { code, signal };
        live.delete(this);
        resolve();
      });
      child.once('error', (error) => {
        this.#tail.push(`spawn failed: ${error.message}`);
        this.#exit = { code: -1, signal: null };
        live.delete(this);
        resolve();
      });
    });
  }

  get pid(): number {
    return this.#child.pid ?? -1;
  }

  /** Every line the process writes from now on (stdout and stderr). */
  onLine(listener: (line: string) => void): void {
    this.#lineListeners.push(listener);
  }

  /** A signal to the process itself (not its group); ignored once it has exited. */
  signal(signal: NodeJS.Signals): void {
    if (this.exited) return;
    try {
      process.kill(this.pid, signal);
    } catch {
      // gone in between
    }
  }

  get exited(): boolean {
    return this.#exit !== undefined;
  }

  /** The last lines the process wrote, joined, for "skipped: ..." reasons. */
  tail(lines = 5): string {
    return this.#tail.slice(-lines).join(' | ');
  }

  describeExit(): string {
    if (!this.#exit) return 'still running';
    const how = this.#exit.signal ? `signal ${this.#exit.signal}` : `code ${this.#exit.code}`;
    const tail = this.tail();
    return `exited with ${how}${tail ? `: ${tail}` : ''}`;
  }

  /**
   * SIGTERM to the process group, SIGKILL after `graceMs`; then its scratch folder goes. A process that had
   * already died keeps it, for a look at its config and error log.
   */
  async stop(graceMs = 3000): Promise<void> {
    if (this.exited) return;
    signalGroup(this.pid, 'SIGTERM');
    const killed = sleep(graceMs).then(() => {
      if (!this.exited) signalGroup(this.pid, 'SIGKILL');
    });
    await Promise.race([this.#exited, killed]);
    await this.#exited;
    if (this.#scratchDir) await rm(this.#scratchDir, { recursive: true, force: true });
  }
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  }
}

export interface SpawnOptions {
  readonly cpus: string;
  readonly cwd?: string;
  readonly env?: NodeJS.ProcessEnv;
  /** A folder made for this process alone (its config, files): removed when it is stopped. */
  readonly scratchDir?: string;
}

/** Starts `command` in its own process group (so stop() reaches its workers), pinned with taskset. */
export function spawnPinned(
  name: string,
  command: string,
  args: readonly string[],
  options: SpawnOptions,
): BenchProcess {
  const [cmd, argv] = pinnedArgv(options.cpus, command, args);
  const child = spawn(cmd, argv, {
    cwd: options.cwd,
    env: options.env ?? process.env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new BenchProcess(name, child, options.scratchDir);
}

/**
 * GET `url` until it answers 2xx, the process dies or the time is up. An `https` URL is dialled with
 * `serverName` as SNI and the certificate is not verified (the bench's own, self-signed).
 */
export async function waitForHttp(
  url: string,
  process_: BenchProcess | undefined,
  timeoutMs: number,
  headers: Record<string, string> = {},
  serverName?: string,
): Promise<{ ok: true } | { ok: false; reason: string }> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer';
  while (Date.now() < deadline) {
    if (process_?.exited) return { ok: false, reason: process_.describeExit() };
    const status = await probe(url, headers, 2000, serverName).catch((error: unknown) => {
      last = error instanceof Error ? error.message : String(error);
      return 0;
    });
    if (status >= 200 && status < 300) return { ok: true };
    if (status !== 0) last = `HTTP ${status}`;
    await sleep(100);
  }
  return { ok: false, reason: `${url} not ready after ${timeoutMs} ms (last: ${last})` };
}

/** One GET; resolves with the status code after reading the body. */
export function probe(
  url: string,
  headers: Record<string, string> = {},
  timeoutMs = 2000,
  serverName?: string,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const tls = url.startsWith('https:');
    const request = tls ? httpsRequest : httpRequest;
    const options = {
      headers,
      agent: false as const,
      timeout: timeoutMs,
      ...(tls ? { rejectUnauthorized: false, ...(serverName ? { servername: serverName } : {}) } : {}),
    };
    const req = request(url, options, (res) => {
      res.resume();
      res.once('end', () => resolve(res.statusCode ?? 0));
      res.once('error', reject);
    });
    req.once('timeout', () => req.destroy(new Error(`timeout after ${timeoutMs} ms`)));
    req.once('error', reject);
    req.end();
  });
}

/** `pid` and all its descendants, from /proc/<pid>/task/<tid>/children (Linux). */
export function processTree(pid: number): number[] {
  const out: number[] = [];
  const visit = (p: number): void => {
    out.push(p);
    let tasks: string[] = [];
    try {
      tasks = readFileSync(`/proc/${p}/task/${p}/children`, 'utf8').trim().split(/\s+/);
    } catch {
      return;
    }
    for (const child of tasks) if (child !== '') visit(Number(child));
  };
  visit(pid);
  return out;
}

/** Resident set size of one process in bytes (VmRSS, from /proc/<pid>/status); undefined once it has exited. */
export function processRssBytes(pid: number): number | undefined {
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match?.[1] ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** Resident set size of the whole process tree in bytes (VmRSS of each, from /proc/<pid>/status). */
export function treeRssBytes(pid: number): number | undefined {
  let total = 0;
  let found = false;
  for (const p of processTree(pid)) {
    const rss = processRssBytes(p);
    if (rss === undefined) continue;
    total += rss;
    found = true;
  }
  return found ? total : undefined;
}

/** Linux reports utime/stime in clock ticks; USER_HZ is 100 on every mainstream kernel build. */
const CLOCK_TICKS_PER_SECOND = 100;

/** CPU seconds (user + system) used so far by the process tree, from /proc/<pid>/stat. */
export function treeCpuSeconds(pid: number): number | undefined {
  let ticks = 0;
  let found = false;
  for (const p of processTree(pid)) {
    try {
      const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
      // Fields after the command name, which is in parentheses and may contain spaces.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
      found = true;
    } catch {
      // exited
    }
  }
  return found ? ticks / CLOCK_TICKS_PER_SECOND : undefined;
}

/** Busy CPU seconds (everything but idle and iowait) per CPU number, from /proc/stat. */
export function cpuBusySeconds(): Map<number, number> {
  const out = new Map<number, number>();
  try {
    for (const line of readFileSync('/proc/stat', 'utf8').split('\n')) {
      const match = /^cpu(\d+)\s+(.*)$/.exec(line);
      if (!match?.[2]) continue;
      const [user, nice, system, , , irq, softirq, steal] = match[2].split(' ').map(Number);
      const busy = (user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0) + (steal ?? 0);
      out.set(Number(match[1]), busy / CLOCK_TICKS_PER_SECOND);
    }
  } catch {
    // not Linux
  }
  return out;
}

/** Busy CPU seconds over a taskset list such as `0`, `1-3` or `0,2`. */
export function busySecondsOn(cpus: string, busy: ReadonlyMap<number, number>): number | undefined {
  if (cpus === '') return undefined;
  let total = 0;
  for (const part of cpus.split(',')) {
    const [from, to] = part.split('-').map(Number);
    if (from === undefined || Number.isNaN(from)) return undefined;
    for (let c = from; c <= (to ?? from); c++) total += busy.get(c) ?? 0;
  }
  return total;
}
