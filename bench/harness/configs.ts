import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rename, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hasCommand } from './affinity.ts';
import { type BenchCertificate, TLS_SERVER_NAME } from './bench-certificate.ts';
import type { Programs } from './compiled.ts';
import { type Endpoint, endpointKey } from './endpoints.ts';
import {
  churnedRouteYaml,
  type GatewayManifestOptions,
  gatewayManifests,
  LISTENER_PORT,
} from './gateway-manifests.ts';
import { waitForGrpc } from './grpc-load.ts';
import { type HaproxyFrontend, haproxyConfig } from './haproxy-config.ts';
import type { LoadTarget } from './load.ts';
import { nginxGrpcProxyConfig, nginxProxyConfig, nginxTlsPassthroughConfig } from './nginx-config.ts';
import { freePort } from './ports.ts';
import { type BenchProcess, spawnPinned, waitForHttp } from './processes.ts';
import { RuntimeMeter } from './runtime-meter.ts';
import {
  gatewayTraceCounters,
  getText,
  type RunningSink,
  startTraceSink,
  traceFinding,
} from './trace-sink.ts';
import { type Traffic, usesTls } from './traffic.ts';

/** The things compared in one scenario: no proxy at all, our gateway, and what a user would pick instead. */
export type ConfigKind =
  | 'direct'
  | 'gateway'
  | 'nginx'
  | 'haproxy'
  | 'http-proxy'
  | 'undici'
  | 'splice'
  | 'node-h2';

export const CONFIG_LABELS: Readonly<Record<ConfigKind, string>> = {
  direct: 'direct to backend',
  gateway: 'clusterset-gateway',
  nginx: 'nginx (1 worker)',
  haproxy: 'haproxy (1 thread)',
  'http-proxy': 'http-proxy (keep-alive agent)',
  undici: 'minimal undici proxy',
  splice: 'Node TCP splice (floor)',
  'node-h2': 'minimal node:http2 proxy (floor)',
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
  /** For `gateway`: `node <program...> --manifests ...` when not this checkout's build (`--baseline`). */
  readonly program?: readonly string[];
  /** For `gateway`: more command-line flags (`--workers 2`). */
  readonly args?: readonly string[];
  /** For `gateway`: tracing on, exporting to a local OTLP sink the bench starts, sampling this share. */
  readonly tracing?: { readonly sampleRatio: number };
  /** Measured only when --config names its id: neither by default nor by its kind. */
  readonly optIn?: boolean;
}

export interface StartedConfig {
  readonly origin: string;
  /** The proxy process (its tree is measured for RSS and CPU); absent for `direct`. */
  readonly proxy?: BenchProcess;
  /** Event-loop delay, GC and allocation of a Node proxy (absent for nginx, haproxy and direct). */
  readonly runtime?: RuntimeMeter;
  /** Rewrites the route file (atomic rename) with a new generation; gateway only. */
  readonly churn?: (generation: number) => Promise<void>;
  /** A line for the report, read before stop (a traced gateway: what its collector received). */
  readonly report?: () => Promise<string>;
  stop(): Promise<void>;
}

export type StartOutcome =
  | { readonly ok: true; readonly started: StartedConfig }
  | { readonly ok: false; readonly reason: string };

export interface ConfigContext {
  readonly proxyCpus: string;
  /** The load generator's core(s): where helpers that are not the proxy (a trace collector) run. */
  readonly loadCpus: string;
  readonly projectDir: string;
  readonly programs: Programs;
  readonly traffic: Traffic;
  /**
   * Where the proxies forward to: the primary endpoint and, for multi-endpoint scenarios, all of them (for
   * TLS passthrough, the backend's HTTPS listener).
   */
  readonly upstream: readonly Endpoint[];
  /** The backend's HTTPS listener: what `direct` dials in the TLS scenarios. */
  readonly backendHttps?: Endpoint;
  /** The TLS scenarios' certificate, for every proxy that terminates. */
  readonly certificate?: BenchCertificate;
  /** A request that must answer 2xx through the config before it is measured. */
  readonly probe: LoadTarget;
  readonly gatewayReadyTimeoutMs: number;
  /** Start the gateway under `node --cpu-prof`, writing profiles here. */
  readonly cpuProfDir?: string;
}

export async function startConfig(spec: ConfigSpec, ctx: ConfigContext): Promise<StartOutcome> {
  const [primary] = ctx.upstream;
  if (!primary) return { ok: false, reason: 'no upstream endpoints' };
  if (usesTls(ctx.traffic) && !ctx.certificate) return { ok: false, reason: 'no TLS certificate' };
  switch (spec.kind) {
    case 'direct': {
      const target = usesTls(ctx.traffic) ? ctx.backendHttps : primary;
      if (!target) return { ok: false, reason: 'the backend has no HTTPS listener' };
      return { ok: true, started: { origin: originOf(ctx.traffic, target), stop: async () => {} } };
    }
    case 'gateway':
      return startGateway(spec, ctx);
    case 'nginx': {
      if (!hasCommand('nginx'))
        return { ok: false, reason: 'nginx not installed (scripts/install-bench-tools.sh)' };
      const dir = await mkdtemp(join(tmpdir(), 'bench-nginx-proxy-'));
      const port = await freePort();
      const config = join(dir, 'nginx.conf');
      const text = nginxPeerConfig(ctx, { dir, workers: 1 }, port);
      if (!text.ok) return text;
      await writeFile(config, text.config);
      const proc = spawnPinned('nginx', 'nginx', ['-c', config, '-p', dir, '-e', join(dir, 'error.log')], {
        cpus: ctx.proxyCpus,
        scratchDir: dir,
      });
      return ready(proc, port, ctx, 10_000);
    }
    case 'haproxy': {
      if (!hasCommand('haproxy'))
        return { ok: false, reason: 'haproxy not installed (scripts/install-bench-tools.sh)' };
      const dir = await mkdtemp(join(tmpdir(), 'bench-haproxy-'));
      const port = await freePort();
      const config = join(dir, 'haproxy.cfg');
      await writeFile(config, haproxyConfig(port, ctx.upstream, haproxyFrontend(ctx)));
      const proc = spawnPinned('haproxy', 'haproxy', ['-db', '-f', config], {
        cpus: ctx.proxyCpus,
        scratchDir: dir,
      });
      return ready(proc, port, ctx, 10_000);
    }
    case 'http-proxy':
    case 'undici':
    case 'splice':
    case 'node-h2': {
      const speaks = spec.kind === 'node-h2' ? 'grpc' : 'http';
      if (ctx.traffic !== speaks)
        return {
          ok: false,
          reason: `speaks ${speaks === 'grpc' ? 'h2c' : 'HTTP/1.1'} only, not ${ctx.traffic}`,
        };
      if (ctx.upstream.length > 1) {
        return {
          ok: false,
          reason: 'single-target proxy: it has no way to spread load over an endpoint set',
        };
      }
      const port = await freePort();
      const peer = PEER_PROGRAMS[spec.kind];
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

const PEER_PROGRAMS = {
  'http-proxy': 'http-proxy-server',
  undici: 'undici-proxy',
  splice: 'tcp-splice',
  'node-h2': 'h2-proxy',
} as const;

function originOf(traffic: Traffic, endpoint: Endpoint): string {
  return `${usesTls(traffic) ? 'https' : 'http'}://${endpointKey(endpoint)}`;
}

/** The scenario's probe through `origin`, in the scenario's protocol, until it answers. */
function reachable(
  origin: string,
  proc: BenchProcess,
  ctx: ConfigContext,
  timeoutMs: number,
): Promise<{ ok: true } | { ok: false; reason: string }> {
  if (ctx.traffic === 'grpc') return waitForGrpc(origin, ctx.probe, proc, timeoutMs);
  return waitForHttp(
    `${origin}${ctx.probe.path}`,
    proc,
    timeoutMs,
    { host: ctx.probe.host },
    usesTls(ctx.traffic) ? TLS_SERVER_NAME : undefined,
  );
}

function nginxPeerConfig(
  ctx: ConfigContext,
  common: { dir: string; workers: number },
  port: number,
): { ok: true; config: string } | { ok: false; reason: string } {
  switch (ctx.traffic) {
    case 'http':
      return { ok: true, config: nginxProxyConfig(common, port, ctx.upstream) };
    case 'https-terminate':
      return { ok: true, config: nginxProxyConfig(common, port, ctx.upstream, ctx.certificate) };
    case 'grpc':
      return { ok: true, config: nginxGrpcProxyConfig(common, port, ctx.upstream) };
    case 'tls-passthrough': {
      const module = nginxStreamModule();
      if (!module.ok) return module;
      return {
        ok: true,
        config: nginxTlsPassthroughConfig(common, port, ctx.upstream, TLS_SERVER_NAME, module.loadModule),
      };
    }
  }
}

/** Where nginx's stream module comes from: built in, a loadable file (Debian: libnginx-mod-stream), or absent. */
function nginxStreamModule(): { ok: true; loadModule: string | undefined } | { ok: false; reason: string } {
  let flags = '';
  try {
    flags = execFileSync('sh', ['-c', 'nginx -V 2>&1'], { encoding: 'utf8' });
  } catch {
    return { ok: false, reason: 'nginx -V failed' };
  }
  if (/--with-stream(\s|$)/.test(flags)) return { ok: true, loadModule: undefined };
  if (!flags.includes('--with-stream=dynamic'))
    return { ok: false, reason: 'nginx was built without the stream module' };
  const modules = /--modules-path=(\S+)/.exec(flags)?.[1] ?? '/usr/lib/nginx/modules';
  const file = join(modules, 'ngx_stream_module.so');
  if (!existsSync(file))
    return { ok: false, reason: `no ${file} (Debian: libnginx-mod-stream, scripts/install-bench-tools.sh)` };
  return { ok: true, loadModule: file };
}

function haproxyFrontend(ctx: ConfigContext): HaproxyFrontend {
  switch (ctx.traffic) {
    case 'http':
      return { kind: 'http' };
    case 'https-terminate':
      return { kind: 'https', certificateFile: ctx.certificate?.combinedFile ?? '' };
    case 'grpc':
      return { kind: 'grpc' };
    case 'tls-passthrough':
      return { kind: 'tls-passthrough', serverName: TLS_SERVER_NAME };
  }
}

async function ready(
  proc: BenchProcess,
  port: number,
  ctx: ConfigContext,
  timeoutMs: number,
  runtime?: RuntimeMeter,
): Promise<StartOutcome> {
  const origin = originOf(ctx.traffic, { address: '127.0.0.1', port });
  const up = await reachable(origin, proc, ctx, timeoutMs);
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
  for (const [name, text] of Object.entries(gatewayManifests(manifests, ctx.certificate)))
    await writeFile(join(dir, name), text);
  const servedPort = await freePort();
  const adminPort = await freePort();
  let sink: RunningSink | undefined;
  if (spec.tracing) {
    const started = await startTraceSink(ctx.programs, ctx.loadCpus, ctx.projectDir);
    if (!started.ok) return started;
    sink = started.sink;
  }
  const tracingArgs =
    sink && spec.tracing
      ? ['--otlp-endpoint', sink.url, '--trace-sample-ratio', String(spec.tracing.sampleRatio)]
      : [];
  const nodeFlags = ctx.cpuProfDir ? ['--cpu-prof', '--cpu-prof-dir', ctx.cpuProfDir] : [];
  const proc = spawnPinned(
    'gateway',
    process.execPath,
    [
      ...nodeFlags,
      ...ctx.programs.runtimeProbe,
      ...(spec.program ?? ctx.programs.gateway),
      '--manifests',
      dir,
      '--listener-port-offset',
      String(servedPort - LISTENER_PORT),
      '--admin-port',
      String(adminPort),
      '--log-level',
      'warn',
      ...tracingArgs,
      ...(spec.args ?? []),
    ],
    { cpus: ctx.proxyCpus, cwd: ctx.projectDir, scratchDir: dir },
  );
  // With --workers the probe would answer for the primary alone, which serves no requests: no runtime columns.
  const runtime = spec.args?.includes('--workers') ? undefined : new RuntimeMeter(proc);
  const readyz = await waitForHttp(`http://127.0.0.1:${adminPort}/readyz`, proc, ctx.gatewayReadyTimeoutMs);
  if (!readyz.ok) {
    await proc.stop();
    await sink?.process.stop();
    return { ok: false, reason: `gateway not ready (${readyz.reason})` };
  }
  const origin = originOf(ctx.traffic, { address: '127.0.0.1', port: servedPort });
  const serving = await reachable(origin, proc, ctx, 10_000);
  if (!serving.ok) {
    await proc.stop();
    await sink?.process.stop();
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
      ...(runtime ? { runtime } : {}),
      churn: async (generation) => {
        const tmp = join(dir, `.route.yaml.${generation}.tmp`);
        await writeFile(tmp, churnedRouteYaml(manifests, generation));
        await rename(tmp, join(dir, 'route.yaml'));
      },
      ...(sink
        ? {
            report: async () => {
              const metrics = await getText(`http://127.0.0.1:${adminPort}/metrics`).catch(() => undefined);
              return traceFinding(
                spec.label,
                await sink.counts(),
                metrics === undefined ? undefined : gatewayTraceCounters(metrics),
              );
            },
          }
        : {}),
      // Under --cpu-prof the profile is written at exit; give it time before SIGKILL.
      stop: async () => {
        await proc.stop(ctx.cpuProfDir ? 20_000 : 3000);
        await sink?.process.stop();
      },
    },
  };
}
