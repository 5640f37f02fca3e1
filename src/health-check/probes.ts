import { request } from 'node:http';
import { connect } from 'node:net';

/** How one probe ended; `local` means this process could not probe (no file descriptors): counts for nobody. */
export type ProbeResult = 'success' | 'failure' | 'timeout' | 'local';

export interface ProbeTarget {
  readonly address: string;
  readonly port: number;
  readonly timeoutMs: number;
}

export interface HttpProbeTarget extends ProbeTarget {
  readonly path: string;
  readonly host: string | undefined;
  readonly statusMin: number;
  readonly statusMax: number;
}

const LOCAL_ERRORS = new Set(['EMFILE', 'ENFILE', 'ENOBUFS', 'ENOMEM', 'EADDRNOTAVAIL']);

function failureOf(err: Error & { code?: unknown }): ProbeResult {
  return typeof err.code === 'string' && LOCAL_ERRORS.has(err.code) ? 'local' : 'failure';
}

/** A TCP connect, closed at once: proves the endpoint accepts connections. */
export function tcpProbe(target: ProbeTarget): Promise<ProbeResult> {
  return new Promise((resolve) => {
    const socket = connect({ host: target.address, port: target.port, noDelay: true });
    const done = (result: ProbeResult) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    const timer = setTimeout(done, target.timeoutMs, 'timeout');
    socket.once('connect', () => done('success'));
    socket.once('error', (err) => done(failureOf(err)));
  });
}

/**
 * `GET path` on a connection of its own (no keep-alive, so a probe never shares a socket with traffic):
 * healthy when the status is in range before the timeout. Garbage, a reset or a hang is a failure.
 */
export function httpProbe(target: HttpProbeTarget): Promise<ProbeResult> {
  return new Promise((resolve) => {
    let settled = false;
    const host = target.address.includes(':') ? `[${target.address}]` : target.address;
    const req = request({
      host: target.address,
      port: target.port,
      path: target.path,
      method: 'GET',
      agent: false,
      headers: {
        host: target.host ?? `${host}:${target.port}`,
        'user-agent': 'clusterset-gateway-health-check',
        connection: 'close',
      },
    });
    const done = (result: ProbeResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      resolve(result);
    };
    const timer = setTimeout(done, target.timeoutMs, 'timeout');
    req.once('response', (res) => {
      const status = res.statusCode ?? 0;
      res.resume();
      done(status >= target.statusMin && status <= target.statusMax ? 'success' : 'failure');
    });
    req.once('error', (err) => done(failureOf(err)));
    req.end();
  });
}
