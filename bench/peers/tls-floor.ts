import { readdirSync, readFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createSecureServer, type ServerHttp2Stream } from 'node:http2';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { createServer as createTlsServer, type TLSSocket } from 'node:tls';
import { parseArgs } from 'node:util';
import { parseAllDocuments } from 'yaml';

/**
 * Node's floor under HTTPS and HTTP/2 termination (issue 45), run by the bench in the gateway's place
 * (`--baseline dist-bench/peers/tls-floor.js`): it takes the gateway's arguments, reads the certificate and the
 * backend's address from the same manifests, answers /readyz on the admin port and serves the HTTPS listener with
 * node:tls and node:http2 alone, no routing, no balancing, no metrics.
 *
 * - HTTP/1.1 (ALPN http/1.1 or none): a TLS splice, the TLS analog of bench/peers/tcp-splice.ts: one backend
 *   connection per client connection and the decrypted bytes piped both ways, no HTTP parsing.
 * - HTTP/2 (ALPN h2): node:http2's core stream API answering every stream itself with the backend's small body
 *   (one `respond` and one `end` per stream): the floor of node:http2 over TLS with no upstream at all.
 *
 * `TLS_FLOOR_H2=proxy` makes the HTTP/2 side forward each stream to the backend over HTTP/1.1 instead (class
 * Http1Backend): the floor of a node:http2 to HTTP/1.1 proxy.
 * `TLS_FLOOR_HTTP1=answer` makes the HTTP/1.1 side answer by itself too (one write of a fixed response per request
 * head read), the floor of node:tls with no upstream.
 */
const SMALL_BODY = 'hello from the bench backend\n';

interface Manifests {
  readonly certPem: string;
  readonly keyPem: string;
  readonly backend: { readonly host: string; readonly port: number };
}

function readManifests(dir: string): Manifests {
  let certPem: string | undefined;
  let keyPem: string | undefined;
  let backend: Manifests['backend'] | undefined;
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.yaml'))) {
    for (const doc of parseAllDocuments(readFileSync(join(dir, file), 'utf8'))) {
      const object = doc.toJS() as Record<string, unknown> | null;
      if (object === null || typeof object !== 'object') continue;
      if (object.kind === 'Secret') {
        const data = object.stringData as Record<string, string>;
        certPem = data['tls.crt'];
        keyPem = data['tls.key'];
      } else if (object.kind === 'EndpointSlice' && backend === undefined) {
        const endpoints = object.endpoints as { addresses: string[] }[];
        const ports = object.ports as { port: number }[];
        backend = { host: endpoints[0]!.addresses[0]!, port: ports[0]!.port };
      }
    }
  }
  if (certPem === undefined || keyPem === undefined || backend === undefined)
    throw new Error('tls-floor: the manifests have no certificate Secret or no EndpointSlice');
  return { certPem, keyPem, backend };
}

function spliceToBackend(client: Socket, backend: Manifests['backend']): void {
  const upstream = connect({ host: backend.host, port: backend.port, noDelay: true });
  client.pipe(upstream);
  upstream.pipe(client);
  const close = (): void => {
    client.destroy();
    upstream.destroy();
  };
  client.on('error', close);
  upstream.on('error', close);
  client.on('close', close);
  upstream.on('close', close);
}

function answerEachRequest(client: Socket): void {
  let held = '';
  client.setEncoding('latin1');
  client.on('data', (text: string) => {
    held += text;
    let end = held.indexOf('\r\n\r\n');
    while (end >= 0) {
      held = held.slice(end + 4);
      client.write(
        `HTTP/1.1 200 OK\r\nServer: floor\r\nDate: ${new Date().toUTCString()}\r\nContent-Type: text/plain\r\nContent-Length: ${SMALL_BODY.length}\r\nConnection: keep-alive\r\n\r\n${SMALL_BODY}`,
        'latin1',
      );
      end = held.indexOf('\r\n\r\n');
    }
  });
  client.on('error', () => client.destroy());
}

function answerStream(stream: ServerHttp2Stream): void {
  stream.respond({ ':status': 200, 'content-type': 'text/plain', 'content-length': SMALL_BODY.length });
  stream.end(SMALL_BODY);
}

/**
 * The least a node:http2 -> HTTP/1.1 proxy does per stream: an idle keep-alive backend connection (or a new one),
 * one write of a fixed GET head, the answer read to its Content-Length, then `respond` and `end` on the stream.
 * It assumes the bench backend's answers (a Content-Length, no chunking), so it is a floor, not a proxy.
 */
class Http1Backend {
  readonly #idle: Socket[] = [];
  readonly #backend: Manifests['backend'];
  readonly #head: string;

  constructor(backend: Manifests['backend']) {
    this.#backend = backend;
    this.#head = `GET / HTTP/1.1\r\nHost: ${backend.host}:${backend.port}\r\n\r\n`;
  }

  forward(stream: ServerHttp2Stream): void {
    const socket =
      this.#idle.pop() ?? connect({ host: this.#backend.host, port: this.#backend.port, noDelay: true });
    let held: Buffer = Buffer.alloc(0);
    const onData = (chunk: Buffer): void => {
      held = held.length === 0 ? chunk : Buffer.concat([held, chunk]);
      const blank = held.indexOf('\r\n\r\n');
      if (blank < 0) return;
      const head = held.toString('latin1', 0, blank);
      const length = Number(/content-length: *(\d+)/i.exec(head)?.[1] ?? 0);
      if (held.length < blank + 4 + length) return;
      socket.removeListener('data', onData);
      this.#idle.push(socket);
      if (stream.destroyed) return;
      stream.respond({ ':status': 200, 'content-type': 'text/plain', 'content-length': length });
      stream.end(held.subarray(blank + 4, blank + 4 + length));
    };
    socket.on('data', onData);
    if (socket.listenerCount('error') === 0) socket.on('error', () => socket.destroy());
    socket.write(this.#head, 'latin1');
  }
}

function main(): void {
  const { values } = parseArgs({
    options: {
      manifests: { type: 'string' },
      'listener-port-offset': { type: 'string' },
      'admin-port': { type: 'string' },
      'log-level': { type: 'string' },
    },
    strict: false,
  });
  const manifests = readManifests(String(values.manifests));
  const port = 8080 + Number(values['listener-port-offset']);
  const answerHttp1 = process.env.TLS_FLOOR_HTTP1 === 'answer';

  // node:http2 answers the h2 connections of a TLS server of our own (its secure server picks ALPN by itself
  // and refuses http/1.1 unless allowHTTP1, which would serve it through node:http instead of the splice).
  const h2 = createSecureServer({});
  if (process.env.TLS_FLOOR_H2 === 'proxy') {
    const backend = new Http1Backend(manifests.backend);
    h2.on('stream', (stream: ServerHttp2Stream) => backend.forward(stream));
  } else h2.on('stream', answerStream);
  const server = createTlsServer(
    { cert: manifests.certPem, key: manifests.keyPem, ALPNProtocols: ['h2', 'http/1.1'], noDelay: true },
    (socket: TLSSocket) => {
      if (socket.alpnProtocol === 'h2') h2.emit('secureConnection', socket);
      else if (answerHttp1) answerEachRequest(socket);
      else spliceToBackend(socket, manifests.backend);
    },
  );
  server.listen(port, '127.0.0.1', 4096);

  const admin = createHttpServer((_req, res) => res.end('ok'));
  admin.listen(Number(values['admin-port']), '127.0.0.1');
  process.once('SIGTERM', () => process.exit(0));
}

main();
