import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { countOtlpSpans } from '../harness/otlp-spans.ts';

/**
 * The collector of the traced gateway configs: takes OTLP/HTTP exports on POST /v1/traces, counts their
 * requests, bytes and spans, discards them and answers 200 with an empty ExportTraceServiceResponse. GET /counts
 * answers the totals as JSON (the bench's report reads them).
 *
 * Usage: node bench/peers/otlp-sink.js --port 4318
 */
function main(): void {
  const { values } = parseArgs({ options: { port: { type: 'string' } } });
  if (!values.port) throw new Error('otlp-sink: --port is required');
  const counts = { requests: 0, bytes: 0, spans: 0, malformed: 0 };
  const server = createServer({ keepAliveTimeout: 120_000 }, (req, res) => {
    if (req.method === 'GET' && req.url === '/counts') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(counts));
      return;
    }
    if (req.method !== 'POST' || req.url !== '/v1/traces') {
      res.writeHead(404).end();
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.once('end', () => {
      const wire = Buffer.concat(chunks);
      counts.requests++;
      counts.bytes += wire.length;
      let spans: number | undefined;
      try {
        spans = countOtlpSpans(req.headers['content-encoding'] === 'gzip' ? gunzipSync(wire) : wire);
      } catch {
        spans = undefined;
      }
      if (spans === undefined) counts.malformed++;
      else counts.spans += spans;
      res.writeHead(200, { 'content-type': 'application/x-protobuf', 'content-length': 0 });
      res.end();
    });
  });
  server.listen(Number(values.port), '127.0.0.1', 511, () => {
    process.stdout.write(`otlp-sink listening on ${values.port}\n`);
  });
  process.once('SIGTERM', () => process.exit(0));
}

main();
