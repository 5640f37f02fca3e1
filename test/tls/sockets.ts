import { request as httpsRequest } from 'node:https';
import type { Server as NetServer } from 'node:net';
import { createServer as createTlsServer, type Server as TlsServer, connect as tlsConnect } from 'node:tls';
import type { Pair } from './certs.ts';

/** Sockets and clients the TLS tests share; every server listens on 127.0.0.1, port 0. */
export function listenOn<S extends NetServer>(server: S): Promise<number> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)),
  );
}

/** A TLS backend that answers every connection with one line: its name and the SNI it saw. */
export function tlsLineBackend(name: string, pair: Pair): TlsServer {
  return createTlsServer({ cert: pair.cert, key: pair.key }, (socket) => {
    socket.end(`${name}:${(socket as unknown as { servername?: string }).servername ?? ''}\n`);
  });
}

/** The line a TLS client reads through the gateway, or the error that ended the connection. */
export function readLine(port: number, servername: string, ca: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({ host: '127.0.0.1', port, servername, ca });
    let text = '';
    socket.on('data', (c: Buffer) => {
      text += c.toString();
    });
    socket.on('end', () => resolve(text.trim()));
    socket.on('error', reject);
  });
}

export function httpsGet(
  port: number,
  options: { servername: string; ca: string; cert?: string; key?: string; agent?: false },
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      { host: '127.0.0.1', port, path: '/', agent: false, headers: { host: options.servername }, ...options },
      (res) => {
        let body = '';
        res.on('data', (c: Buffer) => {
          body += c.toString();
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}
