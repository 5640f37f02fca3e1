import { mkdtemp, rename, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hasCommand } from './affinity.ts';
import type { Programs } from './compiled.ts';
import type { Endpoint } from './endpoints.ts';
import {
  churnedRouteYaml,
  type GatewayManifestOptions,
  gatewayManifests,
  LISTENER_PORT,
} from './gateway-manifests.ts';
import { haproxyConfig } from './haproxy-config.ts';
import type { LoadTarget } from './load.ts';
import { nginxProxyConfig } from './nginx-config.ts';
import { freePort } from './ports.ts';
import { type BenchProcess, spawnPinned, waitForHttp } from './processes.ts';
import { RuntimeMeter } from './runtime-meter.ts';

/** The things compared in one scenario: no proxy at all, our gateway, and what a user would pick instead. */
export type ConfigKind = 'direct' | 'gateway' | 'nginx' | 'haproxy' | 'http-proxy' | 'undici';

export const CONFIG_LABELS: Readonly<Record<ConfigKind, string>> = {
  direct: 'direct to backend',
  gateway: 'clusterset-gateway',
  nginx: 'nginx (1 worker)',
  haproxy: 'haproxy (1 thread)',
  'http-proxy': 'http-proxy (keep-alive agent)',
  undici: 'minimal undici proxy',
};

export interface ConfigSpec {
  /** Unique within a scenario; equals the kind except for gateway variants (`gateway-10k`). */
  readonly id: string;
  readonly kind: ConfigKind;
  readonly label: string;
  /** For `gateway`: the manifests it is started with. */
  readonly gateway?: GatewayManifestOptions;
  /** Rewrite the route file this often during each measured run (gateway only). */
  readonly churnIntervalMs?: number;
}

export interface StartedConfig {
  readonly origin: string;
  /** The proxy process (its tree is measured for RSS and CPU); absent for `direct`. */
  readonly proxy?: BenchProcess;
  /** Event-loop delay, GC and allocation of a Node proxy (absent for nginx, haproxy and direct). */
  readonly runtime?: RuntimeMeter;
  /** Rewrites the route file (atomic rename) with a new generation; gateway only. */
  readonly churn?: (generation: number) => Promise<void>;
  stop(): Promise<void>;
}

export type StartOutcome =
  | { readonly ok: true; readonly started: StartedConfig }
  | { readonly ok: false; readonly reason: string };

export interface ConfigContext {
  readonly proxyCpus: string;
  readonly projectDir: string;
  readonly programs: Programs;
  /** Where the backend listens: the primary endpoint and, for multi-endpoint scenarios, all of them. */
  readonly upstream: readonly Endpoint[];
  /** A request that must answer 2xx through the config before it is measured. */
  readonly probe: LoadTarget;
  readonly gatewayReadyTimeoutMs: number;
  /** Start the gateway under `node --cpu-prof`, writing profiles here. */
  readonly cpuProfDir?: string;
}

export async function startConfig(spec: ConfigSpec, ctx: ConfigContext): Promise<StartOutcome> {
  const [primary] = ctx.upstream;
  if (!primary) return { ok: false, reason: 'no upstream endpoints' };
  switch (spec.kind) {
    case 'direct':
      return {
        ok: true,
        started: { origin: `http://${primary.address}:${primary.port}`, stop: async () => {} },
      };
    case 'gateway':
      return startGateway(spec, ctx);
    case 'nginx': {
      if (!hasCommand('nginx'))
        return { ok: false, reason: 'nginx not installed (scripts/install-bench-tools.sh)' };
      const dir = await mkdtemp(join(tmpdir(), 'bench-nginx-proxy-'));
      const port = await freePort();
      const config = join(dir, 'nginx.conf');
      await writeFile(config, nginxProxyConfig({ dir, workers: 1 }, port, ctx.upstream));
      const proc = spawnPinned('nginx', 'nginx', ['-c', config, '-p', dir, '-e', join(dir, 'error.log')], {
        cpus: ctx.proxyCpus,
      });
      return ready(proc, port, ctx, 10_000);
    }
    case 'haproxy': {
      if (!hasCommand('haproxy'))
        return { ok: false, reason: 'haproxy not installed (scripts/install-bench-tools.sh)' };
      const dir = await mkdtemp(join(tmpdir(), 'bench-haproxy-'));
      const port = await freePort();
      const config = join(dir, 'haproxy.cfg');
      await writeFile(config, haproxyConfig(port, ctx.upstream));
      const proc = spawnPinned('haproxy', 'haproxy', ['-db', '-f', config], { cpus: ctx.proxyCpus });
      return ready(proc, port, ctx, 10_000);
    }
    case 'http-proxy':
    case 'undici': {
      if (ctx.upstream.length > 1) {
        return {
          ok: false,
          reason: 'single-target proxy: it has no way to spread load over an endpoint set',
        };
      }
      const port = await freePort();
      const peer = spec.kind === 'undici' ? 'undici-proxy' : 'http-proxy-server';
      const target = `http://${primary.address}:${primary.port}`;
      const proc = spawnPinned(
        spec.kind,
        process.execPath,
        [
          ...ctx.programs.runtimeProbe,
          ...ctx.programs.peer(peer),
          '--port',
          String(port),
          '--target',
          target,
        ],
        { cpus: ctx.proxyCpus, cwd: ctx.projectDir },
      );
      return ready(proc, port, ctx, 20_000, new RuntimeMeter(proc));
    }
  }
}

async function ready(
  proc: BenchProcess,
  port: number,
  ctx: ConfigContext,
  timeoutMs: number,
  runtime?: RuntimeMeter,
): Promise<StartOutcome> {
  const origin = `http://127.0.0.1:${port}`;
  const up = await waitForHttp(`${origin}${ctx.probe.path}`, proc, timeoutMs, { host: ctx.probe.host });
  if (!up.ok) {
    await proc.stop();
    return { ok: false, reason: up.reason };
  }
  return {
    ok: true,
    started: { origin, proxy: proc, ...(runtime ? { runtime } : {}), stop: () => proc.stop() },
  };
}

async function startGateway(spec: ConfigSpec, ctx: ConfigContext): Promise<StartOutcome> {
  const manifests = spec.gateway;
  if (!manifests) return { ok: false, reason: 'no manifests for the gateway config' };
  const dir = await mkdtemp(join(tmpdir(), 'bench-gateway-'));
  for (const [name, text] of Object.entries(gatewayManifests(manifests)))
    await writeFile(join(dir, name), text);
  const servedPort = await freePort();
  const adminPort = await freePort();
  const nodeFlags = ctx.cpuProfDir ? ['--cpu-prof', '--cpu-prof-dir', ctx.cpuProfDir] : [];
  const proc = spawnPinned(
    'gateway',
    process.execPath,
    [
      ...nodeFlags,
      ...ctx.programs.runtimeProbe,
      ...ctx.programs.gateway,
      '--manifests',
      dir,
      '--listener-port-offset',
      String(servedPort - LISTENER_PORT),
      '--admin-port',
      String(adminPort),
      '--log-level',
      'warn',
    ],
    { cpus: ctx.proxyCpus, cwd: ctx.projectDir },
  );
  const runtime = new RuntimeMeter(proc);
  const readyz = await waitForHttp(`http://127.0.0.1:${adminPort}/readyz`, proc, ctx.gatewayReadyTimeoutMs);
  if (!readyz.ok) {
    await proc.stop();
    return { ok: false, reason: `gateway not ready (${readyz.reason})` };
  }
  const origin = `http://127.0.0.1:${servedPort}`;
  const serving = await waitForHttp(`${origin}${ctx.probe.path}`, proc, 10_000, { host: ctx.probe.host });
  if (!serving.ok) {
    await proc.stop();
    return {
      ok: false,
      reason: `gateway not ready (ready, but the probe request failed: ${serving.reason})`,
    };
  }
  return {
    ok: true,
    started: {
      origin,
      proxy: proc,
      runtime,
      churn: async (generation) => {
        const tmp = join(dir, `.route.yaml.${generation}.tmp`);
        await writeFile(tmp, churnedRouteYaml(manifests, generation));
        await rename(tmp, join(dir, 'route.yaml'));
      },
      // Under --cpu-prof the profile is written at exit; give it time before SIGKILL.
      stop: () => proc.stop(ctx.cpuProfDir ? 20_000 : 3000),
    },
  };
}
