import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { processRssBytes, spawnPinned, treeRssBytes, waitForHttp } from './processes.ts';

/** Seconds after /readyz answers at which the gateway's RSS is read. */
export const IDLE_SAMPLES_SEC: readonly number[] = [20, 40];
/** The demo's admin port (`npm start` takes no flags): /readyz is read there. */
const DEMO_ADMIN_URL = 'http://127.0.0.1:9901/readyz';
const READY_TIMEOUT_MS = 60_000;

/** A build whose `npm start` is measured: its checkout (package.json, dist/main.js). */
export interface IdleBuild {
  readonly name: string;
  readonly projectDir: string;
}

export interface IdleDemoRun {
  /** The gateway process alone, MiB, at each of `samplesAtSec`; the demo's world (its child) is not counted. */
  readonly gatewayMiB: readonly number[];
  /** The demo world's child process at the last sample, MiB: the simulated pods and member API servers. */
  readonly worldMiB: number | undefined;
}

export interface IdleDemoResult {
  readonly samplesAtSec: readonly number[];
  readonly builds: readonly {
    readonly name: string;
    readonly command: string;
    readonly runs: readonly IdleDemoRun[];
    readonly failure?: string;
  }[];
}

/**
 * The Node flags of a checkout's `npm start` (package.json `scripts.start`, `[exec] node <flags> dist/main.js`), so the
 * bench measures what a newcomer runs, not a copy of it.
 */
export function startScriptFlags(projectDir: string): string[] {
  const pkg = JSON.parse(readFileSync(join(projectDir, 'package.json'), 'utf8')) as {
    scripts?: Record<string, string>;
  };
  // `exec` lets the signals npm forwards reach the gateway itself; it changes nothing the bench measures.
  const words = (pkg.scripts?.['start'] ?? '')
    .trim()
    .replace(/^exec\s+/, '')
    .split(/\s+/);
  if (words[0] !== 'node' || words.at(-1) !== 'dist/main.js') {
    throw new Error(`${projectDir}: npm start is not "[exec] node <flags> dist/main.js"`);
  }
  return words.slice(1, -1);
}

/**
 * The demo of `npm start` at rest, builds taking turns run by run (so a drift of the machine falls on both):
 * RSS of the gateway process some seconds after it is ready, pinned to `cpus`. The demo listens on its fixed
 * ports, so nothing else may hold 8080 or 9901 meanwhile.
 */
export async function measureIdleDemo(
  builds: readonly IdleBuild[],
  runs: number,
  cpus: string,
  log: (line: string) => void,
): Promise<IdleDemoResult> {
  const results = builds.map((build) => ({
    name: build.name,
    flags: startScriptFlags(build.projectDir),
    projectDir: build.projectDir,
    runs: [] as IdleDemoRun[],
    failure: undefined as string | undefined,
  }));
  for (let run = 1; run <= runs; run++) {
    for (const build of results) {
      if (build.failure !== undefined) continue;
      log(`idle demo: ${build.name}, run ${run}/${runs} (${Math.max(...IDLE_SAMPLES_SEC)} s after ready)`);
      const gateway = spawnPinned('idle-demo', process.execPath, [...build.flags, 'dist/main.js'], {
        cpus,
        cwd: build.projectDir,
      });
      try {
        const ready = await waitForHttp(DEMO_ADMIN_URL, gateway, READY_TIMEOUT_MS);
        if (!ready.ok) {
          build.failure = ready.reason;
          continue;
        }
        const gatewayMiB: number[] = [];
        let waited = 0;
        for (const at of IDLE_SAMPLES_SEC) {
          await sleep((at - waited) * 1000);
          waited = at;
          gatewayMiB.push(mib(processRssBytes(gateway.pid)) ?? Number.NaN);
        }
        build.runs.push({ gatewayMiB, worldMiB: worldMiB(gateway.pid) });
        log(`idle demo: ${build.name}: ${gatewayMiB.map((m) => m.toFixed(1)).join(' / ')} MiB`);
      } finally {
        await gateway.stop();
      }
    }
  }
  return {
    samplesAtSec: IDLE_SAMPLES_SEC,
    builds: results.map(({ name, flags, runs: done, failure }) => ({
      name,
      command: `node ${[...flags, 'dist/main.js'].join(' ')}`,
      runs: done,
      ...(failure === undefined ? {} : { failure }),
    })),
  };
}

function mib(bytes: number | undefined): number | undefined {
  return bytes === undefined ? undefined : bytes / 1048576;
}

/** The gateway's descendants (the demo's world): its process tree without itself. */
function worldMiB(gatewayPid: number): number | undefined {
  const tree = treeRssBytes(gatewayPid);
  const own = processRssBytes(gatewayPid);
  return tree === undefined || own === undefined || tree === own ? undefined : mib(tree - own);
}
