import { request } from 'node:http';
import type { Programs } from './compiled.ts';
import { freePort } from './ports.ts';
import { type BenchProcess, spawnPinned, waitForHttp } from './processes.ts';

/** What the OTLP sink (bench/peers/otlp-sink.ts) took so far. */
export interface SinkCounts {
  readonly requests: number;
  readonly bytes: number;
  readonly spans: number;
  /** Export bodies that were not a well-formed ExportTraceServiceRequest. */
  readonly malformed: number;
}

/** The gateway's own account of its spans and requests, from its /metrics. */
export interface GatewayTraceCounters {
  readonly exported: number;
  readonly dropped: Readonly<Record<string, number>>;
  readonly queued: number;
  readonly requests: number;
}

export interface RunningSink {
  /** The OTLP/HTTP traces URL to give the gateway's --otlp-endpoint. */
  readonly url: string;
  readonly process: BenchProcess;
  counts(): Promise<SinkCounts>;
}

/**
 * The local collector of a traced gateway config, on the load generator's core(s): a collector is another
 * process, so its CPU must not count as the proxy's.
 */
export async function startTraceSink(
  programs: Programs,
  cpus: string,
  projectDir: string,
): Promise<{ ok: true; sink: RunningSink } | { ok: false; reason: string }> {
  const port = await freePort();
  const proc = spawnPinned(
    'otlp-sink',
    process.execPath,
    [...programs.peer('otlp-sink'), '--port', String(port)],
    {
      cpus,
      cwd: projectDir,
    },
  );
  const origin = `http://127.0.0.1:${port}`;
  const up = await waitForHttp(`${origin}/counts`, proc, 20_000);
  if (!up.ok) {
    await proc.stop();
    return { ok: false, reason: `OTLP sink not ready (${up.reason})` };
  }
  return {
    ok: true,
    sink: {
      url: `${origin}/v1/traces`,
      process: proc,
      counts: async () => JSON.parse(await getText(`${origin}/counts`)) as SinkCounts,
    },
  };
}

/** The trace and request counters of a gateway's /metrics (Prometheus text). */
export function gatewayTraceCounters(metrics: string): GatewayTraceCounters {
  const dropped: Record<string, number> = {};
  let exported = 0;
  let queued = 0;
  let requests = 0;
  for (const line of metrics.split('\n')) {
    const match = /^(\w+)(?:\{([^}]*)\})? (\S+)$/.exec(line);
    if (!match?.[1] || match[3] === undefined) continue;
    const value = Number(match[3]);
    if (!Number.isFinite(value)) continue;
    switch (match[1]) {
      case 'clusterset_gateway_trace_spans_exported_total':
        exported += value;
        break;
      case 'clusterset_gateway_trace_spans_queued':
        queued += value;
        break;
      case 'clusterset_gateway_requests_total':
        requests += value;
        break;
      case 'clusterset_gateway_trace_spans_dropped_total': {
        const reason = /reason="([^"]*)"/.exec(match[2] ?? '')?.[1] ?? 'unknown';
        dropped[reason] = (dropped[reason] ?? 0) + value;
        break;
      }
    }
  }
  return { exported, dropped, queued, requests };
}

/** One line for the report: the spans arrived, and the gateway's count of them agrees. */
export function traceFinding(
  label: string,
  sink: SinkCounts,
  gateway: GatewayTraceCounters | undefined,
): string {
  const n = (value: number): string => Math.round(value).toLocaleString('en-US');
  const took = `the OTLP sink took ${n(sink.spans)} spans in ${n(sink.requests)} exports (${(sink.bytes / 1e6).toFixed(1)} MB${sink.malformed > 0 ? `, ${n(sink.malformed)} malformed` : ''})`;
  if (!gateway) return `${label}: ${took}, over warm-up and runs`;
  const drops = Object.entries(gateway.dropped).filter(([, count]) => count > 0);
  const dropped = drops.reduce((total, [, count]) => total + count, 0);
  const perRequest =
    gateway.requests > 0 ? (gateway.exported + dropped + gateway.queued) / gateway.requests : undefined;
  return [
    `${label}: ${took} over warm-up and runs; the gateway counted ${n(gateway.exported)} exported`,
    `${n(dropped)} dropped${drops.length > 0 ? ` (${drops.map(([reason, count]) => `${reason} ${n(count)}`).join(', ')})` : ''}`,
    `${n(gateway.queued)} queued`,
    `${perRequest === undefined ? 'n/a' : perRequest.toFixed(3)} sampled spans per request served (${n(gateway.requests)} requests)`,
  ].join(', ');
}

/** The body of a GET that must answer 2xx. */
export function getText(url: string, timeoutMs = 5000): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent: false, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.once('end', () => {
        const status = res.statusCode ?? 0;
        if (status < 200 || status >= 300) reject(new Error(`${url}: HTTP ${status}`));
        else resolve(Buffer.concat(chunks).toString('utf8'));
      });
      res.once('error', reject);
    });
    req.once('timeout', () => req.destroy(new Error(`${url}: timeout after ${timeoutMs} ms`)));
    req.once('error', reject);
    req.end();
  });
}
