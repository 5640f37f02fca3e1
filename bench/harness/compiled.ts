import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

export type PeerName =
  | 'undici-proxy'
  | 'http-proxy-server'
  | 'tcp-splice'
  | 'node-backend'
  | 'grpc-backend'
  | 'h2-proxy'
  | 'otlp-sink';

/** How to start each Node program of a bench run: `node <argv...>`. */
export interface Programs {
  /** `--manifests ...` and the rest follow. */
  readonly gateway: readonly string[];
  peer(name: PeerName): readonly string[];
  /** Node flags that load bench/peers/runtime-probe.ts and trace GC (read by RuntimeMeter). */
  readonly runtimeProbe: readonly string[];
}

/** The Node flags the image runs the gateway with (Dockerfile); `npm start` adds --optimize-for-size for the demo. */
export const SHIPPED_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=8'];

/**
 * Compiles the gateway (`npm run build`, as the image does) and the Node peers, so that every Node process
 * in the comparison runs plain JavaScript: a tsx loader costs ~35 MiB of RSS and CPU of its own, which
 * would blur both the memory and the throughput columns.
 */
export function compilePrograms(
  projectDir: string,
  log: (line: string) => void,
  nodeFlags: readonly string[] = SHIPPED_NODE_FLAGS,
): Programs {
  const tsc = join(projectDir, 'node_modules', 'typescript', 'bin', 'tsc');
  log('compiling the gateway (npm run build:check -> dist/) and the Node peers (-> dist-bench/)');
  // The gateway as `npm run build` makes it (the type-checked compile, the topology page, the CRD bundle).
  execFileSync(process.execPath, [join(projectDir, 'scripts', 'build.mjs'), '--check'], {
    cwd: projectDir,
    stdio: 'inherit',
  });
  execFileSync(process.execPath, [tsc, '-p', 'bench/tsconfig.peers.json'], {
    cwd: projectDir,
    stdio: 'inherit',
  });
  return {
    gateway: [...nodeFlags, join(projectDir, 'dist', 'main.js')],
    peer: (name) => [join(projectDir, 'dist-bench', 'peers', `${name}.js`)],
    runtimeProbe: ['--trace-gc', '--import', join(projectDir, 'dist-bench', 'peers', 'runtime-probe.js')],
  };
}

/** The TypeScript sources through tsx: for the harness's own smoke test, where speed is not measured. */
export function sourcePrograms(projectDir: string): Programs {
  return {
    gateway: ['--import', 'tsx', join(projectDir, 'src', 'main.ts')],
    peer: (name) => ['--import', 'tsx', join(projectDir, 'bench', 'peers', `${name}.ts`)],
    // tsx first: the probe is TypeScript too.
    runtimeProbe: [
      '--trace-gc',
      '--import',
      'tsx',
      '--import',
      join(projectDir, 'bench', 'peers', 'runtime-probe.ts'),
    ],
  };
}
