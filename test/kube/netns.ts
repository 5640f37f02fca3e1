import { type ChildProcess, execFileSync, spawn } from 'node:child_process';

/**
 * A network namespace joined to the host by a veth pair on a /30, for backends whose addresses a real API
 * server accepts in an EndpointSlice (it rejects 127.0.0.0/8). Needs root and iproute2; `available()` says why
 * not otherwise.
 */
export class TestNetns {
  readonly name: string;
  readonly hostIf: string;
  readonly nsIf: string;
  readonly hostAddress: string;
  readonly address: string;
  readonly #children: ChildProcess[] = [];

  constructor(index = 0) {
    const tag = `${process.pid % 100000}${index}`;
    this.name = `cgw-${tag}`;
    this.hostIf = `cgwh${tag}`.slice(0, 15);
    this.nsIf = `cgwn${tag}`.slice(0, 15);
    const octet = (process.pid + index * 7) % 250;
    const base = (index % 60) * 4;
    this.hostAddress = `10.213.${octet}.${base + 1}`;
    this.address = `10.213.${octet}.${base + 2}`;
  }

  /** Undefined when namespaces can be made here, else the reason. */
  static unavailable(): string | undefined {
    if (process.platform !== 'linux') return 'network namespaces need Linux';
    if (process.getuid?.() !== 0) return 'creating a network namespace needs root';
    try {
      execFileSync('ip', ['netns', 'list'], { stdio: 'ignore' });
    } catch {
      return 'iproute2 (`ip netns`) is not available';
    }
    return undefined;
  }

  create(): void {
    const ip = (...args: string[]): void => {
      execFileSync('ip', args, { stdio: 'pipe' });
    };
    ip('netns', 'add', this.name);
    try {
      ip('link', 'add', this.hostIf, 'type', 'veth', 'peer', 'name', this.nsIf);
      ip('link', 'set', this.nsIf, 'netns', this.name);
      ip('addr', 'add', `${this.hostAddress}/30`, 'dev', this.hostIf);
      ip('link', 'set', this.hostIf, 'up');
      ip('netns', 'exec', this.name, 'ip', 'addr', 'add', `${this.address}/30`, 'dev', this.nsIf);
      ip('netns', 'exec', this.name, 'ip', 'link', 'set', this.nsIf, 'up');
      ip('netns', 'exec', this.name, 'ip', 'link', 'set', 'lo', 'up');
    } catch (err) {
      this.destroy();
      throw err;
    }
  }

  /** Runs a command inside the namespace; killed by destroy(). */
  spawn(command: string, args: readonly string[], cwd: string): ChildProcess {
    const child = spawn('ip', ['netns', 'exec', this.name, command, ...args], {
      cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.#children.push(child);
    return child;
  }

  destroy(): void {
    for (const child of this.#children) if (child.exitCode === null) child.kill('SIGKILL');
    for (const args of [
      ['link', 'del', this.hostIf],
      ['netns', 'del', this.name],
    ]) {
      try {
        execFileSync('ip', args, { stdio: 'ignore' });
      } catch {
        // Already gone (deleting one end of a veth pair removes the other).
      }
    }
  }
}

/** Resolves with the first stdout line matching `pattern`, or rejects if the child exits first. */
export function waitForLine(child: ChildProcess, pattern: RegExp, timeoutMs = 15_000): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffer = '';
    let stderr = '';
    const timer = setTimeout(
      () => reject(new Error(`timed out waiting for ${pattern}; stderr: ${stderr}`)),
      timeoutMs,
    );
    child.stdout?.on('data', (chunk: Buffer) => {
      buffer += chunk.toString('utf8');
      for (const line of buffer.split('\n')) {
        if (pattern.test(line)) {
          clearTimeout(timer);
          resolve(line);
        }
      }
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`process exited with ${code}: ${stderr}`));
    });
  });
}
