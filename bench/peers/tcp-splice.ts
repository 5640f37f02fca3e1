import { connect, createServer, type Socket } from 'node:net';
import { parseArgs } from 'node:util';

/**
 * The floor under any Node.js proxy (issue 31): a net.Server that opens one backend connection per client
 * connection and pipes the bytes both ways, no HTTP parsing at all. Whatever an HTTP-aware Node proxy does, it
 * does at least this, so its req/s per core bounds what such a proxy can reach on Node's sockets.
 *
 * Usage: node bench/peers/tcp-splice.js --port 8081 --target http://127.0.0.1:8000
 */
function main(): void {
  const { values } = parseArgs({ options: { port: { type: 'string' }, target: { type: 'string' } } });
  if (!values.port || !values.target) throw new Error('tcp-splice: --port and --target are required');
  const target = new URL(values.target);
  const host = target.hostname.replace(/^\[|\]$/g, '');
  const port = Number(target.port);
  const server = createServer({ noDelay: true }, (client: Socket) => {
    const backend = connect({ host, port, noDelay: true });
    client.pipe(backend);
    backend.pipe(client);
    const close = (): void => {
      client.destroy();
      backend.destroy();
    };
    client.on('error', close);
    backend.on('error', close);
    client.on('close', close);
    backend.on('close', close);
  });
  server.listen(Number(values.port), '127.0.0.1', 4096, () => {
    process.stdout.write(`tcp-splice listening on ${values.port} -> ${values.target}\n`);
  });
  process.once('SIGTERM', () => process.exit(0));
}

main();
