import { type ClientHttp2Session, connect, constants } from 'node:http2';
import { createHistogram } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { GRPC_REQUEST, grpcFrame, grpcMessages } from './grpc-wire.ts';
import { type LoadResult, type LoadSpec, resultFromNanoseconds } from './load.ts';
import type { BenchProcess } from './processes.ts';

/**
 * A closed-loop gRPC unary load generator over node:http2 (h2c, prior knowledge): `connections` HTTP/2
 * connections, each keeping `streamsPerConnection` calls in flight; a new call starts as soon as one ends.
 * A call counts as answered when its stream ends with trailers; grpc-status other than 0 is counted as
 * non-2xx, a reset or cut stream as an error. Latency is per call, from request to trailers, in a
 * nanosecond histogram.
 *
 * h2load would load harder, but reports no percentiles and does not read grpc-status.
 */
const CALL_TIMEOUT_MS = 10_000;

const request = grpcFrame(GRPC_REQUEST);

type CallOutcome = 'ok' | 'status' | 'error';

function callHeaders(authority: string, path: string): Record<string, string> {
  return {
    ':method': 'POST',
    ':scheme': 'http',
    ':authority': authority,
    ':path': path,
    'content-type': 'application/grpc',
    te: 'trailers',
  };
}

function open(origin: string): Promise<ClientHttp2Session> {
  return new Promise((resolve, reject) => {
    const session = connect(origin, { settings: { enablePush: false, initialWindowSize: 1 << 20 } });
    session.once('connect', () => {
      session.removeListener('error', reject);
      session.on('error', () => {});
      resolve(session);
    });
    session.once('error', reject);
  });
}

/** One unary call on `session`. */
export function unaryCall(
  session: ClientHttp2Session,
  headers: Record<string, string>,
  timeoutMs = CALL_TIMEOUT_MS,
): Promise<CallOutcome> {
  return new Promise((resolve) => {
    let status: string | undefined;
    const chunks: Buffer[] = [];
    let stream: ReturnType<ClientHttp2Session['request']>;
    try {
      stream = session.request(headers);
    } catch {
      resolve('error');
      return;
    }
    stream.setTimeout(timeoutMs, () => stream.close(constants.NGHTTP2_CANCEL));
    stream.on('response', (h) => {
      // Trailers-only answers carry grpc-status in the headers.
      const value = h['grpc-status'];
      if (typeof value === 'string') status = value;
    });
    stream.on('trailers', (t) => {
      const value = t['grpc-status'];
      if (typeof value === 'string') status = value;
    });
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('error', () => {});
    stream.once('close', () => {
      if (stream.rstCode !== constants.NGHTTP2_NO_ERROR || status === undefined) resolve('error');
      else if (status !== '0' || grpcMessages(Buffer.concat(chunks))?.length !== 1) resolve('status');
      else resolve('ok');
    });
    stream.end(request);
  });
}

export async function runGrpc(spec: LoadSpec): Promise<LoadResult> {
  const [target] = spec.targets;
  if (!target) throw new Error('grpc load: no target');
  const headers = callHeaders(target.host, target.path);
  const perConnection = spec.streamsPerConnection ?? 1;
  const histogram = createHistogram();
  let answered = 0;
  let errors = 0;
  let badStatus = 0;
  const sessions = await Promise.all(Array.from({ length: spec.connections }, () => open(spec.origin)));
  const t0 = process.hrtime.bigint();
  const deadline = t0 + BigInt(Math.round(spec.durationSec * 1e9));
  let lastEnd = t0;

  // One redial per dead connection, shared by the callers on it, as a gRPC channel reconnects.
  const redials = new Map<number, Promise<void>>();
  const redial = (slot: number): Promise<void> => {
    const pending = redials.get(slot);
    if (pending) return pending;
    const next = open(spec.origin)
      .then((session) => {
        sessions[slot] = session;
      })
      .catch(() => sleep(50))
      .finally(() => redials.delete(slot));
    redials.set(slot, next);
    return next;
  };
  const caller = async (slot: number): Promise<void> => {
    while (process.hrtime.bigint() < deadline) {
      const session = sessions[slot] as ClientHttp2Session;
      if (session.closed || session.destroyed) {
        errors++;
        await redial(slot);
        continue;
      }
      const start = process.hrtime.bigint();
      const outcome = await unaryCall(session, headers);
      const end = process.hrtime.bigint();
      if (end > lastEnd) lastEnd = end;
      if (outcome === 'error') {
        errors++;
        continue;
      }
      answered++;
      if (outcome === 'status') badStatus++;
      histogram.record(Math.max(1, Number(end - start)));
    }
  };
  try {
    await Promise.all(
      sessions.flatMap((_, slot) => Array.from({ length: perConnection }, () => caller(slot))),
    );
  } finally {
    for (const session of sessions) session.destroy();
  }
  const durationSec = Number(lastEnd - t0) / 1e9;
  return resultFromNanoseconds('grpc', { answered, errors, non2xx: badStatus }, durationSec, histogram);
}

/** Unary calls to `origin` until one answers OK, the process dies or the time is up. */
export async function waitForGrpc(
  origin: string,
  target: { readonly host: string; readonly path: string },
  process_: BenchProcess | undefined,
  timeoutMs: number,
): Promise<{ ok: true } | { ok: false; reason: string }> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer';
  while (Date.now() < deadline) {
    if (process_?.exited) return { ok: false, reason: process_.describeExit() };
    const session = await open(origin).catch((error: unknown) => {
      last = error instanceof Error ? error.message : String(error);
      return undefined;
    });
    if (session) {
      const outcome = await unaryCall(session, callHeaders(target.host, target.path), 2000);
      session.destroy();
      if (outcome === 'ok') return { ok: true };
      last = outcome === 'status' ? 'a grpc-status other than OK' : 'the call was reset';
    }
    await sleep(100);
  }
  return { ok: false, reason: `${origin} answered no gRPC call within ${timeoutMs} ms (last: ${last})` };
}
