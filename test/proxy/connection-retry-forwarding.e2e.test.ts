import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBalancerFactory } from '../../src/lb/index.ts';
import { backend, entry, send, simpleTable, startProxy, type TestProxy, to } from './fixtures.ts';

/**
 * Issue 10: connection-fault retries through the proxy, against a backend whose keep-alive connections serve
 * one request each and then go stale: the next request on a reused connection is dropped unanswered.
 */
describe('connection-fault retries through the proxy', () => {
  let stale: Server;
  let proxy: TestProxy;
  const seen: string[] = [];
  const sockets = new Set<Socket>();

  beforeAll(async () => {
    stale = createServer((socket) => {
      sockets.add(socket);
      let served = false;
      socket.on('error', () => {});
      socket.on('data', (chunk) => {
        const method = chunk.toString('latin1').split(' ', 1)[0]!;
        if (served) {
          seen.push(`${method} dropped`);
          socket.destroy();
          return;
        }
        served = true;
        seen.push(`${method} answered`);
        socket.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok');
      });
    });
    await new Promise<void>((resolve) => stale.listen(0, '127.0.0.1', resolve));
    const port = (stale.address() as { port: number }).port;
    const only = backend('stale', [port]);
    proxy = await startProxy(
      simpleTable([entry([to(only)])], [only]),
      createBalancerFactory({ health: { avoidanceMs: 0 } }),
    );
  });

  afterAll(async () => {
    await proxy?.close();
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => stale?.close(resolve));
  });

  it('an idempotent request on a stale connection is sent again on a fresh one to the only endpoint', async () => {
    seen.length = 0;
    expect((await send(proxy.port(), '/warm')).status).toBe(200);
    const answer = await send(proxy.port(), '/again', { method: 'DELETE' });
    expect(answer.status).toBe(200);
    expect(answer.text).toBe('ok');
    expect(seen).toEqual(['GET answered', 'DELETE dropped', 'DELETE answered']);
  });

  it('a POST that was complete on the wire is not repeated: 502', async () => {
    seen.length = 0;
    expect((await send(proxy.port(), '/warm')).status).toBe(200);
    const answer = await send(proxy.port(), '/order', { method: 'POST' });
    expect(answer.status).toBe(502);
    expect(seen).toEqual(['GET answered', 'POST dropped']);
  });
});
