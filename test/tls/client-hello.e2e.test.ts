import { createServer, type Server } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { normalizeServerName, parseClientHello } from '../../src/proxy/listen/tls-client-hello.ts';

/** The ClientHello node:tls really sends for a server name (or none), captured on a plain TCP socket. */
async function captureHello(server: Server, servername: string | undefined): Promise<Buffer> {
  const port = (server.address() as { port: number }).port;
  const captured = new Promise<Buffer>((resolve) => {
    server.once('connection', (socket) => {
      socket.once('data', (chunk: Buffer) => {
        resolve(chunk);
        socket.destroy();
      });
    });
  });
  const client = tlsConnect({
    host: '127.0.0.1',
    port,
    ...(servername ? { servername } : {}),
    rejectUnauthorized: false,
  });
  client.on('error', () => {});
  const hello = await captured;
  client.destroy();
  return hello;
}

/** Re-frames one handshake message into records of at most `size` bytes (RFC 8446 §5.1 allows it). */
function reframe(record: Buffer, size: number): Buffer {
  const body = record.subarray(5);
  const out: Buffer[] = [];
  for (let i = 0; i < body.length; i += size) {
    const part = body.subarray(i, i + size);
    const header = Buffer.from([22, 3, 1, 0, 0]);
    header.writeUInt16BE(part.length, 3);
    out.push(header, part);
  }
  return Buffer.concat(out);
}

describe('ClientHello SNI parser', () => {
  let server: Server;
  let hello: Buffer;

  beforeAll(async () => {
    server = createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    hello = await captureHello(server, 'Abc.Example.com');
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('reads the server name, lower-cased', () => {
    expect(parseClientHello(hello)).toEqual({ kind: 'ok', serverName: 'abc.example.com' });
  });

  it('asks for more bytes until the ClientHello is whole, fed one TCP segment byte by byte', () => {
    for (let n = 1; n < hello.length; n++) {
      expect(parseClientHello(hello.subarray(0, n)).kind).toBe('incomplete');
    }
    expect(parseClientHello(hello)).toEqual({ kind: 'ok', serverName: 'abc.example.com' });
  });

  it('reassembles a ClientHello fragmented across TLS records', () => {
    for (const size of [1, 7, 100]) {
      const fragmented = reframe(hello, size);
      expect(parseClientHello(fragmented)).toEqual({ kind: 'ok', serverName: 'abc.example.com' });
      expect(parseClientHello(fragmented.subarray(0, fragmented.length - 1)).kind).toBe('incomplete');
    }
  });

  it('refuses a ClientHello over the size limit before it has all arrived', () => {
    const verdict = parseClientHello(hello.subarray(0, 20), { maxBytes: 64 });
    expect(verdict.kind).toBe('invalid');
  });

  it('says when there is no SNI', async () => {
    const noSni = await captureHello(server, undefined);
    expect(parseClientHello(noSni)).toEqual({ kind: 'ok', serverName: undefined });
  });

  it('refuses what is not a TLS handshake', () => {
    expect(parseClientHello(Buffer.from('GET / HTTP/1.1\r\nHost: a\r\n\r\n')).kind).toBe('invalid');
    const badLength = Buffer.from(hello);
    badLength.writeUInt16BE(0xffff, 3);
    expect(parseClientHello(badLength).kind).toBe('invalid');
    // A handshake message that is not a ClientHello (ServerHello, type 2).
    const serverHello = Buffer.from(hello);
    serverHello[5] = 2;
    expect(parseClientHello(serverHello).kind).toBe('invalid');
  });

  it('refuses a ClientHello whose extensions overrun the message', () => {
    const truncated = Buffer.from(hello);
    // Shrink the record and handshake lengths so the extensions block runs past the end.
    truncated.writeUInt16BE(truncated.readUInt16BE(3) - 40, 3);
    truncated.writeUIntBE(truncated.readUIntBE(6, 3) - 40, 6, 3);
    expect(parseClientHello(truncated.subarray(0, truncated.length - 40)).kind).toBe('invalid');
  });

  it('normalises a trailing dot and upper case, and refuses what is not a hostname', () => {
    expect(normalizeServerName('ABC.example.com.')).toBe('abc.example.com');
    expect(normalizeServerName('a b.example.com')).toBeUndefined();
    expect(normalizeServerName('')).toBeUndefined();
    expect(normalizeServerName('x'.repeat(64))).toBeUndefined();
  });
});
