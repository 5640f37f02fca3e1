import { createServer, type IncomingHttpHeaders, type ServerHttp2Stream } from 'node:http2';
import { parseArgs } from 'node:util';
import { GRPC_METHOD_PATH, GRPC_REPLY, grpcFrame } from '../harness/grpc-wire.ts';

/**
 * The gRPC backend of the grpc-unary scenario: a node:http2 h2c server (prior knowledge, as gRPC speaks in
 * cleartext) that answers every unary call of bench.Echo/Unary with the small body and grpc-status 0 in the
 * trailers, after reading the whole request. Anything else gets UNIMPLEMENTED, trailers-only.
 *
 * Usage: node bench/peers/grpc-backend.js --listen 127.0.0.1:8000 [--listen ...]
 */

const reply = grpcFrame(GRPC_REPLY);

function handle(stream: ServerHttp2Stream, headers: IncomingHttpHeaders): void {
  stream.on('error', () => {});
  if (headers[':path'] !== GRPC_METHOD_PATH) {
    stream.respond(
      { ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '12' },
      { endStream: true },
    );
    return;
  }
  stream.on('data', () => {});
  stream.once('end', () => {
    if (stream.destroyed) return;
    stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
    stream.once('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
    stream.end(reply);
  });
}

function main(): void {
  const { values } = parseArgs({ options: { listen: { type: 'string', multiple: true } } });
  const listens = values.listen ?? [];
  if (listens.length === 0) throw new Error('grpc-backend: give at least one --listen host:port');
  let pending = listens.length;
  for (const spec of listens) {
    const colon = spec.lastIndexOf(':');
    const server = createServer({ settings: { maxConcurrentStreams: 1000 } });
    server.on('stream', handle);
    server.on('sessionError', () => {});
    server.listen(Number(spec.slice(colon + 1)), spec.slice(0, colon), 4096, () => {
      pending--;
      if (pending === 0) process.stdout.write(`grpc-backend listening on ${listens.length} address(es)\n`);
    });
  }
  process.once('SIGTERM', () => process.exit(0));
}

main();
