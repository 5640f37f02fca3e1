import { createServer, type IncomingHttpHeaders } from 'node:http';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';

/**
 * The floor any Node.js proxy should beat: http.createServer in front of one undici Pool (keep-alive), bodies
 * streamed both ways with Pool.stream, no routing, no balancing, no metrics.
 *
 * Usage: node --import tsx bench/peers/undici-proxy.ts --port 8081 --target http://127.0.0.1:8000
 */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
]);

function withoutHopByHop(headers: IncomingHttpHeaders | Record<string, string | string[] | undefined>) {
  const out: Record<string, string | string[]> = {};
  for (const name in headers) {
    const value = headers[name];
    if (value !== undefined && !HOP_BY_HOP.has(name)) out[name] = value;
  }
  return out;
}

function main(): void {
  const { values } = parseArgs({ options: { port: { type: 'string' }, target: { type: 'string' } } });
  if (!values.port || !values.target) throw new Error('undici-proxy: --port and --target are required');
  const pool = new Pool(values.target, { keepAliveTimeout: 60_000, pipelining: 1 });
  const server = createServer({ keepAliveTimeout: 120_000 }, (req, res) => {
    const method = req.method ?? 'GET';
    const hasBody = method !== 'GET' && method !== 'HEAD';
    pool.stream(
      {
        path: req.url ?? '/',
        method: method as 'GET',
        headers: withoutHopByHop(req.headers),
        body: hasBody ? req : null,
      },
      ({ statusCode, headers }) => {
        res.writeHead(statusCode, withoutHopByHop(headers));
        return res;
      },
      (error) => {
        if (!error) return;
        if (res.headersSent) res.destroy();
        else {
          res.writeHead(502, { 'content-type': 'text/plain' });
          res.end('bad gateway\n');
        }
      },
    );
  });
  server.listen(Number(values.port), '127.0.0.1', 4096, () => {
    process.stdout.write(`undici-proxy listening on ${values.port} -> ${values.target}\n`);
  });
  process.once('SIGTERM', () => process.exit(0));
}

main();
