import { createHistogram } from 'node:perf_hooks';
import { connect, type TLSSocket } from 'node:tls';
import { type LoadResult, type LoadSpec, resultFromNanoseconds } from './load.ts';

/**
 * A closed-loop TLS handshake load generator: `connections` loops, each opening a new TLS connection, sending
 * one `GET` with `Connection: close`, reading the answer and closing, again and again. So every request costs
 * a handshake: a full one (`tls-new`), or an abbreviated one that resumes the loop's last session from its
 * TLS 1.3 ticket (`tls-resumed`). Latency is per connection, connect to close. In `tls-resumed` rows a
 * handshake the server did not resume counts in the non-2xx column (so a proxy that never resumes shows it).
 * wrk and autocannon keep connections alive and cannot measure this.
 */
const CONNECTION_TIMEOUT_MS = 10_000;

type Outcome = { readonly ok: boolean; readonly resumed: boolean; readonly session: Buffer | undefined };

function oneConnection(
  origin: URL,
  serverName: string | undefined,
  requestBytes: string,
  session: Buffer | undefined,
): Promise<Outcome | undefined> {
  return new Promise((resolve) => {
    let latest = session;
    let head = '';
    let settled = false;
    const socket: TLSSocket = connect({
      host: origin.hostname,
      port: Number(origin.port),
      ...(serverName ? { servername: serverName } : {}),
      rejectUnauthorized: false,
      ...(session ? { session } : {}),
    });
    const done = (outcome: Outcome | undefined): void => {
      if (settled) return;
      settled = true;
      socket.destroy();
      resolve(outcome);
    };
    socket.setTimeout(CONNECTION_TIMEOUT_MS, () => done(undefined));
    socket.on('session', (ticket: Buffer) => {
      latest = ticket;
    });
    socket.once('secureConnect', () => socket.write(requestBytes));
    socket.on('data', (chunk: Buffer) => {
      if (head.length < 16) head += chunk.toString('latin1', 0, 16);
    });
    socket.on('error', () => done(undefined));
    socket.once('end', () =>
      done({ ok: head.startsWith('HTTP/1.1 2'), resumed: socket.isSessionReused(), session: latest }),
    );
  });
}

function handshakeLoad(tool: 'tls-new' | 'tls-resumed'): (spec: LoadSpec) => Promise<LoadResult> {
  return async (spec) => {
    const [target] = spec.targets;
    if (!target) throw new Error(`${tool} load: no target`);
    const origin = new URL(spec.origin);
    const requestBytes = `GET ${target.path} HTTP/1.1\r\nHost: ${target.host}\r\nConnection: close\r\n\r\n`;
    const histogram = createHistogram();
    let answered = 0;
    let errors = 0;
    let notOk = 0;
    const t0 = process.hrtime.bigint();
    const deadline = t0 + BigInt(Math.round(spec.durationSec * 1e9));
    let lastEnd = t0;
    const loop = async (): Promise<void> => {
      let session: Buffer | undefined;
      while (process.hrtime.bigint() < deadline) {
        const start = process.hrtime.bigint();
        const outcome = await oneConnection(
          origin,
          spec.serverName,
          requestBytes,
          tool === 'tls-resumed' ? session : undefined,
        );
        const end = process.hrtime.bigint();
        if (end > lastEnd) lastEnd = end;
        if (outcome === undefined) {
          errors++;
          continue;
        }
        answered++;
        // The first connection of a loop has nothing to resume.
        const expectedResumed = tool === 'tls-resumed' && session !== undefined;
        if (!outcome.ok || (expectedResumed && !outcome.resumed)) notOk++;
        session = outcome.session;
        histogram.record(Math.max(1, Number(end - start)));
      }
    };
    await Promise.all(Array.from({ length: spec.connections }, loop));
    const durationSec = Number(lastEnd - t0) / 1e9;
    return resultFromNanoseconds(tool, { answered, errors, non2xx: notOk }, durationSec, histogram);
  };
}

export const runTlsNew = handshakeLoad('tls-new');
export const runTlsResumed = handshakeLoad('tls-resumed');
