import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hasCommand } from './affinity.ts';
import { FILE_SIZES, SMALL_BODY } from './backend-content.ts';
import type { Programs } from './compiled.ts';
import type { Endpoint } from './endpoints.ts';
import { nginxBackendConfig } from './nginx-config.ts';
import { type BenchProcess, spawnPinned, waitForHttp } from './processes.ts';

export interface RunningBackend {
  readonly kind: 'nginx' | 'node';
  /** The first listen address: what "direct" and single-target proxies use. */
  readonly primary: Endpoint;
  readonly endpoints: readonly Endpoint[];
  readonly note: string;
  readonly process: BenchProcess;
  stop(): Promise<void>;
}

export interface BackendOptions {
  readonly cpus: string;
  readonly endpoints: readonly Endpoint[];
  /** Use the Node backend even when nginx is installed (the smoke test does). */
  readonly forceNode?: boolean;
  readonly projectDir: string;
  readonly programs: Programs;
}

/** nginx `return 200` when installed (fast enough not to be the bottleneck), else a Node server. */
export async function startBackend(options: BackendOptions): Promise<RunningBackend> {
  const [primary] = options.endpoints;
  if (!primary) throw new Error('startBackend: no endpoints');
  if (!options.forceNode && hasCommand('nginx')) {
    const dir = await mkdtemp(join(tmpdir(), 'bench-backend-'));
    const filesDir = join(dir, 'www');
    await mkdir(join(filesDir, 'files'), { recursive: true });
    for (const [path, size] of Object.entries(FILE_SIZES)) {
      await writeFile(join(filesDir, path), Buffer.alloc(size, 120));
    }
    const config = join(dir, 'nginx.conf');
    await writeFile(config, nginxBackendConfig({ dir, workers: 1 }, options.endpoints, SMALL_BODY, filesDir));
    const proc = spawnPinned(
      'nginx-backend',
      'nginx',
      ['-c', config, '-p', dir, '-e', join(dir, 'error.log')],
      {
        cpus: options.cpus,
      },
    );
    const ready = await waitForHttp(`http://${primary.address}:${primary.port}/`, proc, 10_000);
    if (!ready.ok) {
      await proc.stop();
      throw new Error(`nginx backend did not start: ${ready.reason}`);
    }
    return {
      kind: 'nginx',
      primary,
      endpoints: options.endpoints,
      note: 'backend: nginx 1 worker, `return 200` (small body) and static files, on the load-generator core',
      process: proc,
      stop: () => proc.stop(),
    };
  }
  const args = [...options.programs.peer('node-backend')];
  for (const e of options.endpoints) args.push('--listen', `${e.address}:${e.port}`);
  const proc = spawnPinned('node-backend', process.execPath, args, {
    cpus: options.cpus,
    cwd: options.projectDir,
  });
  const ready = await waitForHttp(`http://${primary.address}:${primary.port}/`, proc, 20_000);
  if (!ready.ok) {
    await proc.stop();
    throw new Error(`node backend did not start: ${ready.reason}`);
  }
  const why = options.forceNode ? 'requested' : 'nginx is not installed (scripts/install-bench-tools.sh)';
  return {
    kind: 'node',
    primary,
    endpoints: options.endpoints,
    note: `backend: a Node http server (${why}); it may be the bottleneck, so absolute numbers are low`,
    process: proc,
    stop: () => proc.stop(),
  };
}
