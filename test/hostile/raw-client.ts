import { connect, type Socket } from 'node:net';
import { connect as connectTls } from 'node:tls';

export interface RawAnswer {
  /** Status of the first response; 0 when the connection closed without one. */
  readonly status: number;
  readonly head: string;
  readonly body: string;
  /** Everything the gateway wrote, in order. */
  readonly raw: string;
  /** True when the gateway closed the connection (rather than the read timing out). */
  readonly closed: boolean;
}

/** A TLS connection instead of plain TCP: the SNI name, the CA to trust, the ALPN protocols offered (none: no ALPN). */
export interface RawTls {
  readonly servername: string;
  readonly ca: string;
  readonly alpn?: readonly string[];
}

/**
 * Writes `bytes` on a fresh TCP (or, with `tls`, TLS) connection and reads until the gateway closes it, or
 * `idleMs` pass without a byte (a kept-alive connection). `pauseMs` delays the write of the second element of
 * `bytes`, if any.
 */
export function rawExchange(
  port: number,
  bytes: string | Buffer | readonly (string | Buffer)[],
  { idleMs = 1500, pauseMs = 0, tls }: { idleMs?: number; pauseMs?: number; tls?: RawTls } = {},
): Promise<RawAnswer> {
  const parts = Array.isArray(bytes) ? bytes : [bytes];
  return new Promise((resolve) => {
    const socket: Socket =
      tls === undefined
        ? connect(port, '127.0.0.1')
        : connectTls({
            host: '127.0.0.1',
            port,
            servername: tls.servername,
            ca: tls.ca,
            ...(tls.alpn === undefined ? {} : { ALPNProtocols: [...tls.alpn] }),
          });
    const chunks: Buffer[] = [];
    let closed = false;
    const done = (): void => {
      clearTimeout(timer);
      const raw = Buffer.concat(chunks).toString('latin1');
      const split = raw.indexOf('\r\n\r\n');
      const head = split === -1 ? raw : raw.slice(0, split);
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(raw)?.[1];
      socket.destroy();
      resolve({
        status: status ? Number(status) : 0,
        head,
        body: split === -1 ? '' : raw.slice(split + 4),
        raw,
        closed,
      });
    };
    let timer = setTimeout(done, idleMs);
    socket.on('data', (c: Buffer) => {
      chunks.push(c);
      clearTimeout(timer);
      timer = setTimeout(done, idleMs);
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      closed = true;
      done();
    });
    socket.on(tls === undefined ? 'connect' : 'secureConnect', () => {
      // The idle wait starts once the connection is up (a handshake on a loaded machine is not idleness).
      clearTimeout(timer);
      timer = setTimeout(done, idleMs);
      socket.write(parts[0]!);
      if (parts.length > 1) {
        setTimeout(() => {
          for (const p of parts.slice(1)) if (!socket.destroyed) socket.write(p);
        }, pauseMs);
      }
    });
  });
}
