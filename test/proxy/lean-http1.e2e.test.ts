import type { Server } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawExchange } from '../hostile/raw-client.ts';
import { REQUEST_CASES } from '../hostile/request-corpus.ts';
import { backend, entry, invalid, simpleTable, startProxy, type TestProxy, to } from './fixtures.ts';
import { comparable, GOOD, h, startBackend } from './lean-http1-corpus.ts';

describe('lean HTTP/1.1 server path (against --no-lean-http1)', () => {
  let upstream: Server;
  let lean: TestProxy;
  let node: TestProxy;

  beforeAll(async () => {
    upstream = await startBackend();
    const port = (upstream.address() as { port: number }).port;
    const good = backend('good', [port]);
    const table = simpleTable(
      [
        entry([invalid()], { route: 'default/invalid', path: { kind: 'PathPrefix', value: '/invalid' } }),
        entry([to(good)]),
      ],
      [good],
    );
    const limits = { headerTimeoutMs: 400, keepAliveTimeoutMs: 600 };
    lean = await startProxy(table, undefined, { limits, leanHttp1: true });
    node = await startProxy(table, undefined, { limits, leanHttp1: false });
  });
  afterAll(async () => {
    await Promise.all([lean.close(), node.close()]);
    await new Promise((r) => upstream.close(r));
  });

  it.each(GOOD.map((bytes) => ({ bytes, name: JSON.stringify(bytes).slice(0, 90) })))(
    "answers as Node's server does: $name",
    async ({ bytes }) => {
      const [a, b] = await Promise.all([
        rawExchange(lean.port(), bytes, { idleMs: 900, pauseMs: 50 }),
        rawExchange(node.port(), bytes, { idleMs: 900, pauseMs: 50 }),
      ]);
      expect(a.status).toBeGreaterThan(0);
      expect(comparable(a.raw)).toBe(comparable(b.raw));
      expect(a.closed).toBe(b.closed);
    },
  );

  it.each(REQUEST_CASES)(
    "hostile request answered as Node's server does: $name",
    async ({ bytes, status, closes = true }) => {
      const idleMs = closes ? 3_000 : 300;
      const [a, b] = await Promise.all([
        rawExchange(lean.port(), bytes, { idleMs }),
        rawExchange(node.port(), bytes, { idleMs }),
      ]);
      expect(a.status).toBe(status);
      expect(comparable(a.raw)).toBe(comparable(b.raw));
      expect(a.closed).toBe(b.closed);
    },
  );

  it('serves many requests on one kept-alive connection, then closes it once idle for the keep-alive timeout', async () => {
    const socket = connect(lean.port(), '127.0.0.1');
    let raw = '';
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => {
      raw += d;
    });
    const closed = new Promise<void>((r) => socket.once('close', () => r()));
    for (let i = 0; i < 20; i++) {
      socket.write(`GET /n${i} HTTP/1.1\r\n${h}\r\n`);
      await expect.poll(() => raw.split('HTTP/1.1 200 OK').length - 1).toBe(i + 1);
    }
    expect(raw).toContain('Keep-Alive: timeout=0\r\n');
    await closed;
    expect(raw).toContain('"url":"/n19"');
  });
});
