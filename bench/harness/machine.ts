import { execFileSync } from 'node:child_process';
import { cpus, loadavg, release, type } from 'node:os';
import type { MachineInfo } from './results.ts';

function run(command: string, args: readonly string[]): string | undefined {
  try {
    return execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
  } catch (error) {
    // `nginx -v` and `haproxy -v` may write to stderr and still succeed.
    const stderr = (error as { stderr?: unknown }).stderr;
    return typeof stderr === 'string' && stderr.trim() !== '' ? stderr.trim() : undefined;
  }
}

function versionOf(command: string, args: readonly string[]): string | undefined {
  try {
    const out = execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    return out.split('\n')[0]?.trim();
  } catch (error) {
    const stderr = (error as { stderr?: unknown }).stderr;
    return typeof stderr === 'string' ? stderr.split('\n')[0]?.trim() : undefined;
  }
}

export function describeMachine(): MachineInfo {
  const lscpu = run('lscpu', []) ?? '';
  const cpuModel = /^Model name:\s+(.+)$/m.exec(lscpu)?.[1]?.trim() ?? 'unknown CPU';
  const tools: Record<string, string> = {};
  const nginx = run('sh', ['-c', 'nginx -v 2>&1']);
  if (nginx) tools.nginx = nginx.replace(/^nginx version:\s*nginx\//, '');
  const haproxy = versionOf('haproxy', ['-v']);
  if (haproxy) tools.haproxy = /version (\S+)/.exec(haproxy)?.[1] ?? haproxy;
  const wrk = run('sh', ['-c', 'wrk -v 2>&1 | head -1']);
  if (wrk?.startsWith('wrk')) tools.wrk = wrk.replace(/^wrk\s+/, '').replace(/ \[.*$/, '');
  return {
    cpuModel,
    // cpus(), not availableParallelism(): the runner pins itself, which shrinks the latter to its own cores.
    cores: cpus().length,
    node: process.version,
    os: `${type()} ${release()}`,
    tools,
    loadAverage1m: loadavg()[0] ?? 0,
  };
}
