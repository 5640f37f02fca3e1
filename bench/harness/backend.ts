import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hasCommand } from './affinity.ts';
import { FILE_SIZES, SMALL_BODY } from './backend-content.ts';
import type { BenchCertificate } from './bench-certificate.ts';
import type { Programs } from './compiled.ts';
import { type Endpoint, endpointKey } from './endpoints.ts';
import { waitForGrpc } from './grpc-load.ts';
import { GRPC_METHOD_PATH } from './grpc-wire.ts';
import { nginxBackendConfig } from './nginx-config.ts';
import { type BenchProcess, spawnPinned, waitForHttp } from './processes.ts';

export interface RunningBackend {
  readonly kind: 'nginx' | 'node' | 'grpc';
  /** The first listen address: what "direct" and single-target proxies use. */
  readonly primary: Endpoint;
  readonly endpoints: readonly Endpoint[];
  /** The HTTPS listener, when asked for (same content, the bench certificate). */
  readonly https?: Endpoint;
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
  /** Also serve HTTPS here with this certificate (TLS scenarios). */
  readonly https?: { readonly endpoint: Endpoint; readonly certificate: BenchCertificate };
  /** Serve gRPC (h2c) instead of HTTP on the endpoints. */
  readonly grpc?: boolean;
}

/**
 * nginx `return 200` when installed (fast enough not to be the bottleneck), else a Node server; for gRPC
 * the node:http2 server of bench/peers/grpc-backend.ts.
 */
export async function startBackend(options: BackendOptions): Promise<RunningBackend> {
  const [primary] = options.endpoints;
  if (!primary) throw new Error('startBackend: no endpoints');
  if (options.grpc) return startGrpcBackend(options, primary);
  const https = options.https;
  const httpsReady = async (proc: BenchProcess): Promise<void> => {
    if (!https) return;
    const ready = await waitForHttp(`https://${endpointKey(https.endpoint)}/`, proc, 10_000);
    if (!ready.ok) {
      await proc.stop();
      throw new Error(`backend HTTPS listener did not start: ${ready.reason}`);
    }
  };
  const httpsFields = https ? { https: https.endpoint } : {};
  if (!options.forceNode && hasCommand('nginx')) {
    const dir = await mkdtemp(join(tmpdir(), 'bench-backend-'));
    const filesDir = join(dir, 'www');
    await mkdir(join(filesDir, 'files'), { recursive: true });
    for (const [path, size] of Object.entries(FILE_SIZES)) {
      await writeFile(join(filesDir, path), Buffer.alloc(size, 120));
    }
    const config = join(dir, 'nginx.conf');
    await writeFile(
      config,
      nginxBackendConfig(
        { dir, workers: 1 },
        options.endpoints,
        SMALL_BODY,
        filesDir,
        https ? { endpoint: https.endpoint, tls: https.certificate } : undefined,
      ),
    );
    const proc = spawnPinned(
      'nginx-backend',
      'nginx',
      ['-c', config, '-p', dir, '-e', join(dir, 'error.log')],
      { cpus: options.cpus, scratchDir: dir },
    );
    const ready = await waitForHttp(`http://${primary.address}:${primary.port}/`, proc, 10_000);
    if (!ready.ok) {
      await proc.stop();
      throw new Error(`nginx backend did not start: ${ready.reason}`);
    }
    await httpsReady(proc);
    return {
      kind: 'nginx',
      primary,
      endpoints: options.endpoints,
      ...httpsFields,
      note: `backend: nginx 1 worker, \`return 200\` (small body) and static files${https ? ', over HTTP and HTTPS' : ''}, on the load-generator core`,
      process: proc,
      stop: () => proc.stop(),
    };
  }
  const args = [...options.programs.peer('node-backend')];
  for (const e of options.endpoints) args.push('--listen', `${e.address}:${e.port}`);
  if (https) {
    args.push(
      '--https-listen',
      endpointKey(https.endpoint),
      '--cert',
      https.certificate.certFile,
      '--key',
      https.certificate.keyFile,
    );
  }
  const proc = spawnPinned('node-backend', process.execPath, args, {
    cpus: options.cpus,
    cwd: options.projectDir,
  });
  const ready = await waitForHttp(`http://${primary.address}:${primary.port}/`, proc, 20_000);
  if (!ready.ok) {
    await proc.stop();
    throw new Error(`node backend did not start: ${ready.reason}`);
  }
  await httpsReady(proc);
  const why = options.forceNode ? 'requested' : 'nginx is not installed (scripts/install-bench-tools.sh)';
  return {
    kind: 'node',
    primary,
    endpoints: options.endpoints,
    ...httpsFields,
    note: `backend: a Node http server (${why}); it may be the bottleneck, so absolute numbers are low`,
    process: proc,
    stop: () => proc.stop(),
  };
}

async function startGrpcBackend(options: BackendOptions, primary: Endpoint): Promise<RunningBackend> {
  const args = [...options.programs.peer('grpc-backend')];
  for (const e of options.endpoints) args.push('--listen', endpointKey(e));
  const proc = spawnPinned('grpc-backend', process.execPath, args, {
    cpus: options.cpus,
    cwd: options.projectDir,
  });
  const ready = await waitForGrpc(
    `http://${endpointKey(primary)}`,
    { host: 'bench.test', path: GRPC_METHOD_PATH },
    proc,
    20_000,
  );
  if (!ready.ok) {
    await proc.stop();
    throw new Error(`gRPC backend did not start: ${ready.reason}`);
  }
  return {
    kind: 'grpc',
    primary,
    endpoints: options.endpoints,
    note: 'backend: a node:http2 h2c gRPC server (one process) on the load-generator core',
    process: proc,
    stop: () => proc.stop(),
  };
}
