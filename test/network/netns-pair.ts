import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';

/**
 * Two network namespaces, east and west, as two clusters on two networks: each has a pod address on its own
 * loopback that nothing outside the namespace can route to, a veth pair to the other namespace that carries only
 * gateway-to-gateway traffic, and a veth pair to the host through which the test reaches its gateway's
 * listeners and admin server. Names carry a prefix and the PID; destroy() removes only what create() made.
 * Needs root and iproute2 (see TestNetns.unavailable()).
 */
export interface NetnsSide {
  /** The namespace. */
  readonly name: string;
  /** The namespace's end of its host link: the test reaches the gateway here. */
  readonly address: string;
  /** Its end of the east-west link: the other side's gateway reaches this side's network gateway here. */
  readonly peerAddress: string;
  /** The pod address, on the namespace's loopback: routable from this namespace only. */
  readonly podAddress: string;
  /** The host's end of that link, and its interface. */
  readonly hostAddress: string;
  readonly hostIf: string;
}

export type SideName = 'east' | 'west';

export class NetnsPair {
  readonly east: NetnsSide;
  readonly west: NetnsSide;
  readonly #children = new Set<ChildProcess>();
  readonly #tag: string;

  constructor() {
    const pid = process.pid;
    this.#tag = String(pid);
    // Host links on a /30 each in 10.214.<pid>.0/24: the only addresses the host sees. The east-west link and
    // the pod addresses live inside the namespaces, so they cannot clash with anything on the host.
    const octet = pid % 250;
    this.east = {
      name: `csgw-east-${pid}`,
      address: `10.214.${octet}.2`,
      hostAddress: `10.214.${octet}.1`,
      peerAddress: '10.215.0.1',
      podAddress: '10.216.1.10',
      hostIf: `cgeh${pid}`.slice(0, 15),
    };
    this.west = {
      name: `csgw-west-${pid}`,
      address: `10.214.${octet}.6`,
      hostAddress: `10.214.${octet}.5`,
      peerAddress: '10.215.0.2',
      podAddress: '10.216.2.10',
      hostIf: `cgwh${pid}`.slice(0, 15),
    };
  }

  create(): void {
    const ip = (...args: string[]): void => {
      execFileSync('ip', args, { stdio: 'pipe' });
    };
    const inNs = (side: NetnsSide, ...args: string[]): void => ip('netns', 'exec', side.name, 'ip', ...args);
    const tag = this.#tag;
    try {
      for (const side of [this.east, this.west]) {
        const nsIf = `${side.hostIf.slice(0, 3)}n${tag}`.slice(0, 15);
        ip('netns', 'add', side.name);
        ip('link', 'add', side.hostIf, 'type', 'veth', 'peer', 'name', nsIf);
        ip('link', 'set', nsIf, 'netns', side.name);
        ip('addr', 'add', `${side.hostAddress}/30`, 'dev', side.hostIf);
        ip('link', 'set', side.hostIf, 'up');
        inNs(side, 'addr', 'add', `${side.address}/30`, 'dev', nsIf);
        inNs(side, 'link', 'set', nsIf, 'up');
        inNs(side, 'link', 'set', 'lo', 'up');
        inNs(side, 'addr', 'add', `${side.podAddress}/32`, 'dev', 'lo');
      }
      const eastPeer = `cgep${tag}`.slice(0, 15);
      const westPeer = `cgwp${tag}`.slice(0, 15);
      ip('link', 'add', eastPeer, 'type', 'veth', 'peer', 'name', westPeer);
      ip('link', 'set', eastPeer, 'netns', this.east.name);
      ip('link', 'set', westPeer, 'netns', this.west.name);
      inNs(this.east, 'addr', 'add', `${this.east.peerAddress}/30`, 'dev', eastPeer);
      inNs(this.west, 'addr', 'add', `${this.west.peerAddress}/30`, 'dev', westPeer);
      inNs(this.east, 'link', 'set', eastPeer, 'up');
      inNs(this.west, 'link', 'set', westPeer, 'up');
    } catch (err) {
      this.destroy();
      throw err;
    }
  }

  /** Runs a command inside a namespace (`ip netns exec` execs it: the child's pid is the command's). */
  spawn(side: NetnsSide, command: string, args: readonly string[], cwd: string): ChildProcess {
    const child = spawn('ip', ['netns', 'exec', side.name, command, ...args], {
      cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.#children.add(child);
    child.once('exit', () => this.#children.delete(child));
    return child;
  }

  /**
   * Whether TCP connections from inside `side` to each host:port succeed: 'open', or the error code (ENETUNREACH,
   * ECONNREFUSED, ETIMEDOUT), in order. Tried by one node process in the namespace, as a pod of that side would.
   */
  probe(side: NetnsSide, targets: readonly (readonly [string, number])[]): string[] {
    const script = `const net=require('node:net');
const one=([host,port])=>new Promise((done)=>{const s=net.connect(port,host);
s.setTimeout(1500,()=>{s.destroy();done('ETIMEDOUT')});
s.on('connect',()=>{s.destroy();done('open')});s.on('error',(e)=>done(e.code))});
Promise.all(${JSON.stringify(targets)}.map(one)).then((r)=>console.log(JSON.stringify(r)));`;
    const result = spawnSync('ip', ['netns', 'exec', side.name, process.execPath, '-e', script], {
      encoding: 'utf8',
      timeout: 15_000,
    });
    if (result.status !== 0 || !result.stdout.trim()) throw new Error(`probe failed: ${result.stderr}`);
    return JSON.parse(result.stdout) as string[];
  }

  destroy(): void {
    for (const child of this.#children) if (child.exitCode === null) child.kill('SIGKILL');
    for (const args of [
      ['link', 'del', this.east.hostIf],
      ['link', 'del', this.west.hostIf],
      ['netns', 'del', this.east.name],
      ['netns', 'del', this.west.name],
    ]) {
      try {
        execFileSync('ip', args, { stdio: 'ignore' });
      } catch {
        // Never made, or already gone (deleting a namespace removes the veth ends inside it, and their peers).
      }
    }
  }
}

/** Kills a child and resolves once it has exited (its sockets are closed by then). */
export function kill(child: ChildProcess, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((done) => {
    child.once('exit', () => done());
    child.kill(signal);
  });
}
