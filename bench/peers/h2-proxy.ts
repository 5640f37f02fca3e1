import {
  connect,
  constants,
  createServer,
  type IncomingHttpHeaders,
  type OutgoingHttpHeaders,
  type ServerHttp2Stream,
} from 'node:http2';
import { parseArgs } from 'node:util';

/**
 * The floor any Node.js HTTP/2 proxy should beat: a node:http2 h2c server on the core stream API (no
 * compatibility layer) in front of one h2c client session to the target, a client stream per request, bodies
 * piped both ways, trailers relayed. No routing, no balancing, no metrics, no timeouts: what Node's HTTP/2 costs
 * alone for a gRPC call, to set the gateway's figures against.
 *
 * Usage: node --import tsx bench/peers/h2-proxy.ts --port 8081 --target http://127.0.0.1:8000
 */
const { NGHTTP2_CANCEL, NGHTTP2_INTERNAL_ERROR } = constants;

function main(): void {
  const { values } = parseArgs({ options: { port: { type: 'string' }, target: { type: 'string' } } });
  if (!values.port || !values.target) throw new Error('h2-proxy: --port and --target are required');
  const target = values.target;
  let upstream = connect(target);
  const session = () => {
    if (upstream.closed || upstream.destroyed) upstream = connect(target);
    return upstream;
  };
  const server = createServer({ settings: { maxConcurrentStreams: 1000 } });
  server.on('stream', (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => {
    const out: OutgoingHttpHeaders = {};
    for (const name in headers) if (name !== ':scheme' && name !== ':authority') out[name] = headers[name];
    const req = session().request(out, { endStream: stream.readableEnded });
    let trailers: IncomingHttpHeaders | undefined;
    req.on('response', (head) => {
      stream.respond(head, { waitForTrailers: true });
      req.pipe(stream);
    });
    req.on('trailers', (t) => {
      trailers = t;
    });
    stream.on('wantTrailers', () => stream.sendTrailers(trailers ?? {}));
    req.on('error', () => stream.close(NGHTTP2_INTERNAL_ERROR));
    stream.on('error', () => req.close(NGHTTP2_CANCEL));
    stream.pipe(req);
  });
  server.listen(Number(values.port), '127.0.0.1', 4096, () => {
    process.stdout.write(`h2-proxy listening on ${values.port} -> ${target}\n`);
  });
}

main();
