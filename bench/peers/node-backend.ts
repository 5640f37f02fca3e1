import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { parseArgs } from 'node:util';
import { FILE_SIZES, SMALL_BODY } from '../harness/backend-content.ts';

/**
 * The fallback backend when nginx is missing: answers like the nginx backend does (a small body on any path,
 * 64 KiB and 1 MiB files under /files/, reads and discards request bodies). One Node process is slower than
 * nginx, so with it the backend may be the bottleneck; the report says so.
 *
 * Usage: node --import tsx bench/peers/node-backend.ts --listen 127.0.0.1:8000 [--listen 127.0.10.1:8001 ...]
 *        [--https-listen 127.0.0.1:8443 --cert bench.crt --key bench.key]
 */

const files = new Map(Object.entries(FILE_SIZES).map(([path, size]) => [path, Buffer.alloc(size, 120)]));
const small = Buffer.from(SMALL_BODY);

function handle(req: IncomingMessage, res: ServerResponse): void {
  const body = files.get(req.url ?? '/') ?? small;
  const type = body === small ? 'text/plain' : 'application/octet-stream';
  const reply = (): void => {
    res.writeHead(200, { 'content-type': type, 'content-length': body.length });
    res.end(body);
  };
  if (req.method === 'GET' || req.method === 'HEAD') {
    reply();
    return;
  }
  req.on('data', () => {});
  req.once('end', reply);
}

function main(): void {
  const { values } = parseArgs({
    options: {
      listen: { type: 'string', multiple: true },
      'https-listen': { type: 'string' },
      cert: { type: 'string' },
      key: { type: 'string' },
    },
  });
  const listens = values.listen ?? [];
  if (listens.length === 0) throw new Error('node-backend: give at least one --listen host:port');
  const httpsListen = values['https-listen'];
  let pending = listens.length + (httpsListen ? 1 : 0);
  const listening = (): void => {
    pending--;
    if (pending === 0) process.stdout.write(`node-backend listening on ${listens.length} address(es)\n`);
  };
  for (const spec of listens) {
    const colon = spec.lastIndexOf(':');
    const server = createServer({ keepAliveTimeout: 120_000 }, handle);
    server.listen(Number(spec.slice(colon + 1)), spec.slice(0, colon), 4096, listening);
  }
  if (httpsListen) {
    if (!values.cert || !values.key) throw new Error('node-backend: --https-listen needs --cert and --key');
    const colon = httpsListen.lastIndexOf(':');
    const server = createHttpsServer(
      { keepAliveTimeout: 120_000, cert: readFileSync(values.cert), key: readFileSync(values.key) },
      handle,
    );
    server.listen(Number(httpsListen.slice(colon + 1)), httpsListen.slice(0, colon), 4096, listening);
  }
  process.once('SIGTERM', () => process.exit(0));
}

main();
