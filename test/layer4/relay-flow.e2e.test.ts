import { randomBytes } from 'node:crypto';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, freePort, type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { gateway, gatewayClass, yamlDocs } from '../support/manifests.ts';
import { layer4Route, slice } from './layer4-fixtures.ts';

/**
 * The layer-4 relay's flow control, end to end (TCPRoute and TLS passthrough share one relay): a client that
 * stops reading holds the backend back, a backend that stops reading holds the client back, and once the slow
 * side reads again every byte arrives in order; a half-close passes through while the other way goes on.
 */
const NS = 'bulk';
const HOST = 'bulk.example.com';
/**
 * Several times what the kernel buffers of the four sockets on the way held when a side stopped reading (8-9
 * MiB on loopback here): a gateway that read on regardless would let the sender finish.
 */
const TOTAL = 64 * 1024 * 1024;
const CHUNK = 64 * 1024;

/** Random bytes of a prime length, repeated: a stream's byte at `offset` is TAPE[offset % TAPE.length]. */
const TAPE = randomBytes(1_000_003);

/** The stream's bytes from `offset`: shifted, reordered or repeated bytes would not match. */
function patternChunk(offset: number, length: number): Buffer {
  const parts: Buffer[] = [];
  let at = offset % TAPE.length;
  for (let left = length; left > 0; ) {
    const part = TAPE.subarray(at, Math.min(TAPE.length, at + left));
    parts.push(part);
    left -= part.length;
    at = 0;
  }
  return parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts);
}

/** Checks bytes as they come against the pattern: how many, and whether they all matched. */
class PatternCheck {
  received = 0;
  /** The offset of the first chunk that did not match, or -1. */
  firstWrong = -1;
  take(chunk: Buffer): void {
    if (this.firstWrong < 0 && !chunk.equals(patternChunk(this.received, chunk.length)))
      this.firstWrong = this.received;
    this.received += chunk.length;
  }
}

/** Writes `total` pattern bytes with backpressure, counting those the kernel took; ends after the last. */
function sendPattern(socket: Socket, total: number): { flushed: () => number } {
  let offset = 0;
  let flushed = 0;
  const more = (): void => {
    while (offset < total) {
      const length = Math.min(CHUNK, total - offset);
      const chunk = patternChunk(offset, length);
      offset += length;
      const ok = socket.write(chunk, (err) => {
        if (!err) flushed += length;
      });
      if (!ok) {
        socket.once('drain', more);
        return;
      }
    }
    socket.end();
  };
  more();
  return { flushed: () => flushed };
}

/** Polls `progress` until it stops moving for `quietMs` (or the whole transfer is done); its last value. */
async function stalled(
  progress: () => number,
  done: number,
  quietMs = 1_000,
  timeoutMs = 20_000,
): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  let last = progress();
  let since = Date.now();
  while (Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    const now = progress();
    if (now >= done) return now;
    if (now !== last) {
      last = now;
      since = Date.now();
    } else if (Date.now() - since >= quietMs && now > 0) return now;
  }
  throw new Error(`no stall within ${timeoutMs} ms (at ${last} bytes)`);
}

/**
 * The backend: reads one command line (after the ClientHello the TLS listener relays ahead, which it skips),
 * `SEND <n>` (sends n pattern bytes, then ends) or `SINK` (checks what follows against the pattern without
 * reading until the test lets it; at the client's end answers `got <n> <first wrong offset>` and ends).
 */
interface Backend {
  readonly server: Server;
  port: number;
  /** The sending side of the last SEND connection. */
  sender: { flushed: () => number } | undefined;
  /** The last SINK connection: paused until the test resumes it. */
  sink: { socket: Socket; check: PatternCheck } | undefined;
}

async function startBackend(): Promise<Backend> {
  const backend = { port: 0 } as Backend;
  const server = createServer({ allowHalfOpen: true }, (socket) => {
    socket.on('error', () => socket.destroy());
    let head = Buffer.alloc(0);
    const onData = (chunk: Buffer): void => {
      head = Buffer.concat([head, chunk]);
      const skip = head[0] === 22 && head.length >= 5 ? 5 + head.readUInt16BE(3) : 0;
      const newline = head.indexOf(10, skip);
      if (newline < 0) return;
      socket.off('data', onData);
      const command = head.subarray(skip, newline).toString();
      const rest = head.subarray(newline + 1);
      if (command.startsWith('SEND ')) {
        backend.sender = sendPattern(socket, Number(command.slice(5)));
        socket.resume();
        return;
      }
      const check = new PatternCheck();
      check.take(rest);
      socket.pause();
      backend.sink = { socket, check };
      socket.on('data', (c: Buffer) => check.take(c));
      socket.on('end', () => socket.end(`got ${check.received} ${check.firstWrong}\n`));
    };
    socket.on('data', onData);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(backend, { server, port: (server.address() as { port: number }).port });
}

/** The ClientHello node:tls sends for `servername`, captured on a plain TCP socket. */
async function captureHello(servername: string): Promise<Buffer> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const hello = new Promise<Buffer>((resolve) =>
    server.once('connection', (socket) => socket.once('data', (chunk: Buffer) => resolve(chunk))),
  );
  const client = tlsConnect({
    host: '127.0.0.1',
    port: (server.address() as { port: number }).port,
    servername,
    rejectUnauthorized: false,
  });
  client.on('error', () => {});
  const captured = await hello;
  client.destroy();
  server.close();
  return captured;
}

async function open(port: number, first: Buffer | undefined, command: string): Promise<Socket> {
  const socket = connect({ host: '127.0.0.1', port, allowHalfOpen: true });
  socket.on('error', () => {});
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  if (first !== undefined) socket.write(first);
  socket.write(`${command}\n`);
  return socket;
}

describe('layer-4 relay flow control (TCPRoute, TLS passthrough)', () => {
  let gw: GatewayProcess;
  let backend: Backend;
  let hello: Buffer;
  const ports = { tcp: 0, tls: 0 };

  beforeAll(async () => {
    backend = await startBackend();
    hello = await captureHello(HOST);
    ports.tcp = await freePort();
    ports.tls = await freePort();
    const backendRef = { name: 'bulk', port: 9000 };
    gw = await startGateway({
      manifests: {
        'bulk.yaml': yamlDocs(
          gatewayClass(),
          gateway('edge', NS, [
            { name: 'tcp', protocol: 'TCP', port: ports.tcp },
            { name: 'tls', protocol: 'TLS', port: ports.tls, tls: { mode: 'Passthrough' } },
          ]),
          {
            apiVersion: 'v1',
            kind: 'Service',
            metadata: { name: 'bulk', namespace: NS },
            spec: { ports: [{ name: 'main', protocol: 'TCP', port: 9000 }] },
          },
          slice('bulk-1', { service: 'bulk', namespace: NS, port: backend.port }),
          layer4Route('TCPRoute', 'bulk', NS, {
            parentRefs: [{ name: 'edge', sectionName: 'tcp' }],
            rules: [{ backendRefs: [backendRef] }],
          }),
          {
            apiVersion: 'gateway.networking.k8s.io/v1alpha2',
            kind: 'TLSRoute',
            metadata: { name: 'bulk', namespace: NS },
            spec: {
              parentRefs: [{ name: 'edge', sectionName: 'tls' }],
              hostnames: [HOST],
              rules: [{ backendRefs: [backendRef] }],
            },
          },
        ),
      },
    });
  }, 60_000);

  afterAll(async () => {
    await gw?.stop();
    backend?.server.close();
  });

  it('tls: a client that ends before its ClientHello is complete is closed, not held until the hello timeout', async () => {
    const client = connect({ host: '127.0.0.1', port: ports.tls, allowHalfOpen: true });
    client.on('error', () => {});
    const closed = new Promise<number>((resolve) => client.once('close', () => resolve(Date.now())));
    client.end(hello.subarray(0, 20));
    const started = Date.now();
    expect((await closed) - started).toBeLessThan(5_000);
  });

  for (const listener of ['tcp', 'tls'] as const) {
    const first = () => (listener === 'tls' ? hello : undefined);

    it(`${listener}: a client that stops reading holds the backend back; then every byte arrives, in order, with the end`, async () => {
      backend.sender = undefined;
      const client = await open(ports[listener], first(), `SEND ${TOTAL}`);
      client.pause();
      const held = await stalled(() => backend.sender?.flushed() ?? 0, TOTAL);
      expect(held).toBeLessThan(TOTAL);
      const check = new PatternCheck();
      const ended = new Promise<void>((resolve) => client.once('end', resolve));
      client.on('data', (chunk: Buffer) => check.take(chunk));
      client.resume();
      await ended;
      expect({ received: check.received, firstWrong: check.firstWrong }).toEqual({
        received: TOTAL,
        firstWrong: -1,
      });
      client.destroy();
    }, 60_000);

    it(`${listener}: a backend that stops reading holds the client back; the client's end passes, the answer comes back`, async () => {
      backend.sink = undefined;
      const client = await open(ports[listener], first(), 'SINK');
      const sender = sendPattern(client, TOTAL);
      const held = await stalled(sender.flushed, TOTAL);
      expect(held).toBeLessThan(TOTAL);
      let answer = '';
      client.on('data', (chunk: Buffer) => {
        answer += chunk.toString();
      });
      const ended = new Promise<void>((resolve) => client.once('end', resolve));
      const sink = await eventually(async () => backend.sink ?? Promise.reject(new Error('no SINK yet')));
      sink.socket.resume();
      await ended;
      expect(answer).toBe(`got ${TOTAL} -1\n`);
      client.destroy();
    }, 60_000);
  }
});
