import autocannon, { type AutocannonRequest } from 'autocannon';
import type { LoadResult, LoadSpec } from './load.ts';

/** autocannon keeps a built request per target per connection; this many distinct targets is plenty. */
const MAX_TARGETS = 1000;

export async function runAutocannon(spec: LoadSpec): Promise<LoadResult> {
  const body = spec.bodyBytes ? Buffer.alloc(spec.bodyBytes, 97) : undefined;
  const requests: AutocannonRequest[] = sample(spec.targets, MAX_TARGETS).map((t) => ({
    method: spec.method,
    path: t.path,
    headers: { host: t.host, ...(body ? { 'content-type': 'application/octet-stream' } : {}) },
    ...(body ? { body } : {}),
  }));
  const instance = autocannon({
    url: spec.origin,
    connections: spec.connections,
    duration: spec.durationSec,
    timeout: 10,
    // autocannon never verifies certificates; the SNI is the only TLS setting the bench needs.
    ...(spec.serverName ? { servername: spec.serverName } : {}),
    requests,
  });
  const result = await instance;
  const total = result.requests.total;
  return {
    tool: 'autocannon',
    requests: total,
    durationSec: result.duration,
    rps: result.duration > 0 ? total / result.duration : 0,
    latencyMs: {
      p50: result.latency.p50,
      p99: result.latency.p99,
      p999: result.latency.p99_9,
      max: result.latency.max,
      mean: result.latency.mean,
    },
    errors: result.errors,
    non2xx: result.non2xx,
    bytesRead: result.throughput.total,
  };
}

/** Every n-th element so that a sample still spans the whole list. */
export function sample<T>(items: readonly T[], max: number): T[] {
  if (items.length <= max) return [...items];
  const step = items.length / max;
  const out: T[] = [];
  for (let i = 0; i < max; i++) {
    const item = items[Math.floor(i * step)];
    if (item !== undefined) out.push(item);
  }
  return out;
}
