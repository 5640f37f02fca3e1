import { Agent, createServer } from 'node:http';
import { parseArgs } from 'node:util';
import httpProxy from 'http-proxy';

/**
 * http-proxy (node-http-proxy) as most Node.js users deploy it: one target, a keep-alive agent, bodies piped.
 *
 * Usage: node --import tsx bench/peers/http-proxy-server.ts --port 8082 --target http://127.0.0.1:8000
 */
function main(): void {
  const { values } = parseArgs({ options: { port: { type: 'string' }, target: { type: 'string' } } });
  if (!values.port || !values.target) throw new Error('http-proxy-server: --port and --target are required');
  const agent = new Agent({ keepAlive: true, keepAliveMsecs: 60_000 });
  const proxy = httpProxy.createProxyServer({ target: values.target, agent });
  proxy.on('error', (_error, _req, res) => {
    if ('writeHead' in res && !res.headersSent) {
      res.writeHead(502, { 'content-type': 'text/plain' });
      res.end('bad gateway\n');
    } else res.destroy();
  });
  const server = createServer({ keepAliveTimeout: 120_000 }, (req, res) => proxy.web(req, res));
  server.listen(Number(values.port), '127.0.0.1', 4096, () => {
    process.stdout.write(`http-proxy listening on ${values.port} -> ${values.target}\n`);
  });
  process.once('SIGTERM', () => process.exit(0));
}

main();
