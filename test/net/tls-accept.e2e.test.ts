import { mkdtempSync, rmSync } from 'node:fs';
import { connect as netConnect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createServer as createTlsServer,
  type TLSSocket,
  type Server as TlsServer,
  connect as tlsConnect,
} from 'node:tls';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { selfSignedCertificate } from '../../src/net/self-signed-certificate.ts';
import { acceptTlsHandlesDirectly } from '../../src/net/tls-accept.ts';
import { listenOn } from '../tls/sockets.ts';

let dir: string;
let cert: string;
let key: string;
const servers: TlsServer[] = [];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'csg-tls-accept-'));
  ({ cert, key } = selfSignedCertificate({
    dir,
    name: 'server',
    commonName: 'localhost',
    subjectAltNames: ['DNS:localhost'],
    days: 1,
  }));
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

afterEach(async () => {
  for (const server of servers.splice(0)) {
    if (!server.listening) continue;
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

/** A TLS server writing `hello` on every connection and keeping it open, on 127.0.0.1 with the direct accept. */
async function directServer(
  options: { maxConnections?: number } = {},
): Promise<{ server: TlsServer; port: number; installed: boolean }> {
  const server = createTlsServer({ cert, key, keepAlive: true, noDelay: true }, (socket) =>
    socket.write('hello'),
  );
  if (options.maxConnections !== undefined) server.maxConnections = options.maxConnections;
  servers.push(server);
  const port = await listenOn(server);
  const installed = acceptTlsHandlesDirectly(server);
  return { server, port, installed };
}

function connections(server: TlsServer): Promise<number> {
  return new Promise((resolve, reject) =>
    server.getConnections((err, n) => (err ? reject(err) : resolve(n))),
  );
}

/** A TLS client that read the server's greeting; the connection stays open. */
function openClient(port: number): Promise<{ socket: TLSSocket; raw: Socket; answer: string }> {
  return new Promise((resolve, reject) => {
    const raw = netConnect(port, '127.0.0.1');
    const socket = tlsConnect({ socket: raw, servername: 'localhost', rejectUnauthorized: false });
    let answer = '';
    socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString('latin1');
      if (answer === 'hello') resolve({ socket, raw, answer });
    });
    socket.on('error', reject);
  });
}

function closed(socket: TLSSocket): Promise<void> {
  return new Promise((resolve) => {
    socket.on('close', () => resolve());
    socket.end();
  });
}

/** The server's count after the client side's close went through (polled: the server sees it a tick later). */
async function settledConnections(server: TlsServer, expected: number): Promise<number> {
  let n = await connections(server);
  for (let i = 0; i < 200 && n !== expected; i++) {
    await new Promise((resolve) => setImmediate(resolve));
    n = await connections(server);
  }
  return n;
}

describe('acceptTlsHandlesDirectly', () => {
  it('serves TLS connections and counts them as net would, for getConnections and close', async () => {
    const { server, port, installed } = await directServer();
    expect(installed).toBe(true);
    // The direct path hands the handle to node:tls without net's socket: no `connection` event, only TLS ones.
    const events: string[] = [];
    const emit = server.emit.bind(server) as (name: string | symbol, ...args: unknown[]) => boolean;
    server.emit = (name: string | symbol, ...args: unknown[]): boolean => {
      events.push(String(name));
      return emit(name, ...args);
    };

    const first = await openClient(port);
    const second = await openClient(port);
    expect(first.answer).toBe('hello');
    expect(second.answer).toBe('hello');
    expect(await connections(server)).toBe(2);
    expect(events).toContain('secureConnection');
    expect(events).not.toContain('connection');

    // The server's secure socket sits directly on the TCP handle; its own socket methods still reach it.
    const seen = await new Promise<{ remotePort: number | undefined; noDelay: boolean }>((resolve) => {
      server.once('secureConnection', (socket: TLSSocket) =>
        resolve({ remotePort: socket.remotePort, noDelay: socket.setNoDelay(true) === socket }),
      );
      void openClient(port).then(({ socket }) => socket.destroy());
    });
    expect(seen.remotePort).toBeGreaterThan(0);
    expect(seen.noDelay).toBe(true);

    await closed(first.socket);
    expect(await settledConnections(server, 1)).toBe(1);

    // close() waits for the last open connection, as with net's own accept.
    let serverClosed = false;
    const closing = new Promise<void>((resolve) =>
      server.close(() => {
        serverClosed = true;
        resolve();
      }),
    );
    await new Promise((resolve) => setImmediate(resolve));
    expect(serverClosed).toBe(false);
    await closed(second.socket);
    await closing;
    expect(serverClosed).toBe(true);
    expect(await connections(server)).toBe(0);
  });

  it('counts a connection once whether the client resets it, sends garbage or leaves mid-handshake', async () => {
    const { server, port, installed } = await directServer();
    expect(installed).toBe(true);
    const clientErrors: Error[] = [];
    server.on('tlsClientError', (err: Error) => clientErrors.push(err));

    const garbage = netConnect(port, '127.0.0.1');
    garbage.on('error', () => {});
    garbage.write('GET / HTTP/1.1\r\nHost: localhost\r\n\r\n');
    await new Promise((resolve) => garbage.on('close', resolve));

    const quitter = netConnect(port, '127.0.0.1');
    quitter.on('error', () => {});
    await new Promise((resolve) => quitter.on('connect', resolve));
    quitter.end(Buffer.from([0x16, 0x03, 0x01, 0x00, 0x40]));
    await new Promise((resolve) => quitter.on('close', resolve));

    const { raw } = await openClient(port);
    raw.resetAndDestroy();

    expect(await settledConnections(server, 0)).toBe(0);
    expect(clientErrors.length).toBeGreaterThanOrEqual(1);
    const after = await openClient(port);
    expect(after.answer).toBe('hello');
    expect(await connections(server)).toBe(1);
    after.socket.destroy();
    expect(await settledConnections(server, 0)).toBe(0);
  });

  it("keeps net's accept where a server limits its connections, and refuses servers it does not know", async () => {
    const limited = await directServer({ maxConnections: 1 });
    expect(limited.installed).toBe(true);
    const kept = await openClient(limited.port);
    const dropped = new Promise<void>((resolve) => limited.server.once('drop', () => resolve()));
    const refused = netConnect(limited.port, '127.0.0.1');
    refused.on('error', () => {});
    await dropped;
    expect(await connections(limited.server)).toBe(1);
    kept.socket.destroy();

    const watched = createTlsServer({ cert, key });
    servers.push(watched);
    watched.on('connection', () => {});
    await listenOn(watched);
    expect(acceptTlsHandlesDirectly(watched)).toBe(false);

    const notListening = createTlsServer({ cert, key });
    expect(acceptTlsHandlesDirectly(notListening)).toBe(false);
  });
});
