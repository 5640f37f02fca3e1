import { execFileSync } from 'node:child_process';
import { availableParallelism } from 'node:os';

/**
 * Where each side of a benchmark runs. On a machine with two or more cores the proxy under test gets core 0
 * and everything else (the load generator, the backend, this runner) shares core 1, so the proxy's req/s is
 * what one core buys. Without `taskset` or with one core nothing is pinned and the report says so.
 */
export interface CpuPlan {
  readonly pinned: boolean;
  readonly proxyCpus: string;
  readonly loadCpus: string;
  readonly cores: number;
  readonly note: string;
}

export function hasCommand(name: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export function planCpus(): CpuPlan {
  const cores = availableParallelism();
  if (!hasCommand('taskset')) {
    return {
      pinned: false,
      proxyCpus: '',
      loadCpus: '',
      cores,
      note: 'taskset not found (util-linux): nothing is pinned, so proxy and load generator compete for cores',
    };
  }
  if (cores < 2) {
    return {
      pinned: false,
      proxyCpus: '',
      loadCpus: '',
      cores,
      note: 'one core: proxy, backend and load generator share it; numbers are far below what a proxy can do',
    };
  }
  const last = cores - 1;
  return {
    pinned: true,
    proxyCpus: '0',
    loadCpus: last === 1 ? '1' : `1-${last}`,
    cores,
    note: `proxy under test pinned to CPU 0; load generator, backend and runner pinned to CPU ${last === 1 ? '1' : `1-${last}`} (taskset)`,
  };
}

/** Moves this process (every thread) onto the load-generator cores; children inherit it. */
export function pinSelf(plan: CpuPlan): void {
  if (!plan.pinned) return;
  execFileSync('taskset', ['-a', '-p', '-c', plan.loadCpus, String(process.pid)], { stdio: 'ignore' });
}

/** The argv that runs `command` on the given CPUs (or unchanged when nothing is pinned). */
export function pinnedArgv(cpus: string, command: string, args: readonly string[]): [string, string[]] {
  if (cpus === '') return [command, [...args]];
  return ['taskset', ['-c', cpus, command, ...args]];
}
