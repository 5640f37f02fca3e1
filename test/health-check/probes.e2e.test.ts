import { createServer as createHttpServer } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { httpProbe, tcpProbe } from '../../src/health-check/probes.ts';

/** Real sockets on 127.0.0.1: what each kind of bad probe target makes of a probe. */
const servers: Server[] = [];
const sockets = new Set<Socket>();

afterEach(async () => {
  for (const socket of sockets) socket.destroy();
  sockets.clear();
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

function listen(server: Server): Promise<number> {
  servers.push(server);
  server.on('connection', (socket: Socket) => sockets.add(socket));
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      resolve(typeof address === 'object' && address ? address.port : 0);
    });
  });
}

async function closedPort(): Promise<number> {
  const server = createServer();
  const port = await listen(server);
  servers.pop();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const http = (port: number, extra: Partial<Parameters<typeof httpProbe>[0]> = {}) =>
  httpProbe({
    address: '127.0.0.1',
    port,
    timeoutMs: 300,
    path: '/healthz',
    host: undefined,
    statusMin: 200,
    statusMax: 399,
    ...extra,
  });

describe('probes against real sockets', () => {
  it('TCP: a listening port passes, a closed one fails', async () => {
    const port = await listen(createServer((socket) => socket.on('error', () => {})));
    expect(await tcpProbe({ address: '127.0.0.1', port, timeoutMs: 300 })).toBe('success');
    expect(await tcpProbe({ address: '127.0.0.1', port: await closedPort(), timeoutMs: 300 })).toBe(
      'failure',
    );
  });

  it('HTTP: a status in range passes; 5xx, out of range, garbage, reset and refusal fail', async () => {
    const paths: string[] = [];
    const ok = await listen(
      createHttpServer((req, res) => {
        paths.push(`${req.method} ${req.url} ${req.headers['user-agent']}`);
        res.writeHead(req.url === '/healthz' ? 204 : 503).end();
      }),
    );
    expect(await http(ok)).toBe('success');
    expect(paths).toEqual(['GET /healthz clusterset-gateway-health-check']);
    expect(await http(ok, { path: '/other' })).toBe('failure');
    expect(await http(ok, { statusMin: 200, statusMax: 200 })).toBe('failure');

    const garbage = await listen(
      createServer((socket) => {
        socket.on('error', () => {});
        socket.end('this is not HTTP\r\n\r\n');
      }),
    );
    expect(await http(garbage)).toBe('failure');
    const reset = await listen(
      createServer((socket) => {
        socket.on('error', () => {});
        socket.on('data', () => socket.resetAndDestroy());
      }),
    );
    expect(await http(reset)).toBe('failure');
    expect(await http(await closedPort())).toBe('failure');
  });

  it('HTTP: a target that accepts and never answers times out', async () => {
    const hang = await listen(createServer((socket) => socket.on('error', () => {})));
    expect(await http(hang, { timeoutMs: 200 })).toBe('timeout');
  });
});
