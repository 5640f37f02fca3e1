import { createServer, type Server } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HttpFilter } from '../../src/ir/http-filters.ts';
import { rawExchange } from '../hostile/raw-client.ts';
import { backend, entry, simpleTable, startProxy, type TestProxy, to } from './fixtures.ts';

/**
 * A backend that refuses upgrades on /refuse (200), accepts them on /ws (101, then echoes in upper case), and
 * records every request line it is sent, so a request that slipped through a tunnel would show.
 */
function startUpgradeBackend(): Promise<{
  server: Server;
  port: number;
  seen: string[];
  sockets: Set<Socket>;
}> {
  const seen: string[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('not upgraded\n');
  });
  server.on('upgrade', (req, socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    seen.push(`UPGRADE ${req.url}`);
    if (req.url === '/ws') {
      socket.write('HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n');
      socket.on('data', (d: Buffer) => socket.write(d.toString().toUpperCase()));
      return;
    }
    // Refuses with a keep-alive 200 and keeps reading: what a smuggled request would reach.
    if (req.url === '/refuse-chunked') {
      socket.write(
        'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n4\r\nnot \r\n9\r\nupgraded\n\r\n0\r\n\r\n',
      );
    } else if (req.url === '/refuse-close') {
      socket.end('HTTP/1.1 403 Forbidden\r\nconnection: close\r\n\r\nnot upgraded\n');
    } else {
      socket.write('HTTP/1.1 200 OK\r\ncontent-length: 13\r\n\r\nnot upgraded\n');
    }
    let buffered = '';
    socket.on('data', (d: Buffer) => {
      buffered += d.toString();
      for (const line of buffered.split('\r\n').filter((l) => /^[A-Z]+ \S+ HTTP/.test(l))) seen.push(line);
      buffered = '';
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ server, port: (server.address() as AddressInfo).port, seen, sockets }),
    ),
  );
}

const upgrade = (path: string, extra = '') =>
  `GET ${path} HTTP/1.1\r\nHost: example.com\r\nConnection: Upgrade\r\nUpgrade: echo\r\n${extra}\r\n`;

describe('upgrade requests', () => {
  let up: Awaited<ReturnType<typeof startUpgradeBackend>>;
  let proxy: TestProxy;

  beforeAll(async () => {
    up = await startUpgradeBackend();
    const b = backend('ws', [up.port]);
    const injecting: HttpFilter = {
      kind: 'RequestHeaderModifier',
      set: [{ name: 'x-bad', value: 'a\r\nx-injected: 1' }],
      add: [],
      remove: [],
    };
    proxy = await startProxy(
      simpleTable(
        [entry([to(b, 1, [injecting])], { path: { kind: 'PathPrefix', value: '/inject' } }), entry([to(b)])],
        [b],
      ),
    );
  });
  afterAll(async () => {
    await proxy.close();
    // Upgraded sockets have left the server's bookkeeping; close() would wait for them.
    for (const socket of up.sockets) socket.destroy();
    await new Promise((r) => up.server.close(r));
  });

  it('tunnels after a 101: bytes flow both ways', async () => {
    const answer = await rawExchange(proxy.port(), [upgrade('/ws'), 'hello'], { pauseMs: 100, idleMs: 500 });
    expect(answer.status).toBe(101);
    expect(answer.head.toLowerCase()).toContain('upgrade: echo');
    expect(answer.body).toBe('HELLO');
  });

  it('never tunnels when the backend refuses: the answer is relayed and the connection serves the next request', async () => {
    up.seen.length = 0;
    const next = 'GET /admin-only HTTP/1.1\r\nHost: internal\r\n\r\n';
    const answer = await rawExchange(proxy.port(), [upgrade('/refuse'), next], {
      pauseMs: 200,
      idleMs: 1_000,
    });
    expect(answer.status).toBe(200);
    expect(answer.head.toLowerCase()).not.toContain('connection: close');
    expect(answer.head.toLowerCase()).toContain('content-length: 13');
    // Two answers on the one connection: the refusal, then the second request, routed like any.
    const answers = answer.raw.match(/HTTP\/1\.1 \d{3}/g);
    expect(answers).toEqual(['HTTP/1.1 200', 'HTTP/1.1 200']);
    expect(answer.raw).toContain('not upgraded\n');
    expect(answer.closed).toBe(false);
    // The second request reached the backend through the route, never through the refused upgrade's socket.
    expect(up.seen).toEqual(['UPGRADE /refuse', 'GET /admin-only']);
  });

  it('serves a request pipelined right behind a refused upgrade', async () => {
    up.seen.length = 0;
    const answer = await rawExchange(
      proxy.port(),
      `${upgrade('/refuse')}GET /second HTTP/1.1\r\nHost: example.com\r\n\r\n`,
      {
        idleMs: 1_000,
      },
    );
    expect(answer.raw.match(/HTTP\/1\.1 \d{3}/g)).toEqual(['HTTP/1.1 200', 'HTTP/1.1 200']);
    expect(up.seen).toEqual(['UPGRADE /refuse', 'GET /second']);
  });

  it('re-chunks a chunked refusal and keeps the connection', async () => {
    up.seen.length = 0;
    const next = 'GET /after-chunked HTTP/1.1\r\nHost: example.com\r\n\r\n';
    const answer = await rawExchange(proxy.port(), [upgrade('/refuse-chunked'), next], {
      pauseMs: 200,
      idleMs: 1_000,
    });
    expect(answer.status).toBe(200);
    expect(answer.head.toLowerCase()).toContain('transfer-encoding: chunked');
    expect(answer.raw).toContain('\r\n\r\n4\r\nnot \r\n9\r\nupgraded\n\r\n0\r\n\r\nHTTP/1.1 200');
    expect(up.seen).toEqual(['UPGRADE /refuse-chunked', 'GET /after-chunked']);
  });

  it('closes after a refusal when the backend closes, the client asks to, or a request body was sent', async () => {
    up.seen.length = 0;
    const next = 'GET /never HTTP/1.1\r\nHost: example.com\r\n\r\n';
    const byBackend = await rawExchange(proxy.port(), [upgrade('/refuse-close'), next], { pauseMs: 200 });
    expect(byBackend.status).toBe(403);
    expect(byBackend.head.toLowerCase()).toContain('connection: close');
    expect(byBackend.body).toBe('not upgraded\n');
    expect(byBackend.closed).toBe(true);
    const byClient = await rawExchange(proxy.port(), [upgrade('/refuse', 'Connection: close\r\n'), next], {
      pauseMs: 200,
    });
    expect(byClient.status).toBe(200);
    expect(byClient.closed).toBe(true);
    // A body after an upgrade request is not framed by the parser any more: the connection cannot go on.
    const withBody = await rawExchange(
      proxy.port(),
      [`${upgrade('/refuse', 'Content-Length: 5\r\n')}hello`, next],
      {
        pauseMs: 200,
      },
    );
    expect(withBody.status).toBe(200);
    expect(withBody.closed).toBe(true);
    expect(up.seen.filter((l) => l.includes('/never'))).toEqual([]);
  });

  it('closes a tunnel idle longer than --tunnel-idle-timeout-ms', async () => {
    const b = backend('ws', [up.port]);
    const idle = await startProxy(simpleTable([entry([to(b)])], [b]), undefined, {
      limits: { tunnelIdleTimeoutMs: 300 },
    });
    try {
      const answer = await rawExchange(idle.port(), [upgrade('/ws'), 'hello'], {
        pauseMs: 50,
        idleMs: 5_000,
      });
      expect(answer.status).toBe(101);
      expect(answer.body).toBe('HELLO');
      // Closed by the gateway, well before the client's own 5 s read timeout.
      expect(answer.closed).toBe(true);
    } finally {
      await idle.close();
    }
  });

  it("holds one of the endpoint's connection slots per tunnel: past the limit a new one gets 503", async () => {
    const b = backend('ws', [up.port]);
    const limited = await startProxy(simpleTable([entry([to(b)])], [b]), undefined, {
      upstream: { connectionsPerEndpoint: 1, queuePerEndpoint: 1 },
    });
    const open = (): Promise<{ socket: Socket; head: string }> =>
      new Promise((resolve, reject) => {
        const socket = connect(limited.port(), '127.0.0.1', () => socket.write(upgrade('/ws')));
        let head = '';
        socket.on('data', (d: Buffer) => {
          head += d.toString();
          if (head.includes('\r\n\r\n')) resolve({ socket, head });
        });
        socket.on('error', reject);
      });
    try {
      const first = await open();
      const second = await open();
      expect([first.head, second.head].map((h) => h.slice(0, 12))).toEqual(['HTTP/1.1 101', 'HTTP/1.1 101']);
      const refused = await rawExchange(limited.port(), upgrade('/ws'), { idleMs: 1_000 });
      expect(refused.status).toBe(503);
      expect(refused.body).toBe('upstream connection limit reached\n');
      // A tunnel the backend ends gives its slot back.
      const before = new Set(up.sockets);
      for (const socket of before) socket.destroy();
      first.socket.destroy();
      second.socket.destroy();
      let again = await rawExchange(limited.port(), [upgrade('/ws'), 'x'], { pauseMs: 50, idleMs: 300 });
      for (let i = 0; again.status !== 101 && i < 20; i++) {
        await new Promise((r) => setTimeout(r, 50));
        again = await rawExchange(limited.port(), [upgrade('/ws'), 'x'], { pauseMs: 50, idleMs: 300 });
      }
      expect(again.status).toBe(101);
      expect(again.body).toBe('X');
    } finally {
      await limited.close();
    }
  });

  it('validates the upstream request like the normal path: a header that would split it is a local 500', async () => {
    up.seen.length = 0;
    const answer = await rawExchange(proxy.port(), upgrade('/inject'));
    expect(answer.status).toBe(500);
    expect(answer.body).toBe('invalid upstream request\n');
    expect(up.seen).toEqual([]);
  });

  // RFC 9113 §3.1 deprecates `Upgrade: h2c`; a server may ignore an upgrade (RFC 9110 §7.8).
  const h2cUpgrade = (extra = '') =>
    'GET /h2c HTTP/1.1\r\nHost: example.com\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n' +
    `HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n${extra}\r\n`;

  it('ignores an h2c upgrade: the request is served as plain HTTP/1.1, without the upgrade headers', async () => {
    up.seen.length = 0;
    const answer = await rawExchange(proxy.port(), h2cUpgrade());
    expect(answer.status).toBe(200);
    expect(answer.head.toLowerCase()).not.toContain('upgrade: h2c');
    expect(answer.body).toContain('not upgraded\n');
    expect(answer.closed).toBe(true);
    // The backend saw an ordinary request, not an upgrade.
    expect(up.seen).toEqual(['GET /h2c']);
  });

  it('refuses an h2c upgrade with a body with 400 and never reaches the backend', async () => {
    up.seen.length = 0;
    const answer = await rawExchange(proxy.port(), `${h2cUpgrade('Content-Length: 5\r\n')}hello`);
    expect(answer.status).toBe(400);
    expect(up.seen).toEqual([]);
  });

  it('survives a client that resets right after an h2c upgrade request', async () => {
    for (let i = 0; i < 5; i++) {
      await new Promise<void>((resolve) => {
        const socket = connect(proxy.port(), '127.0.0.1', () => {
          socket.write(h2cUpgrade());
          socket.resetAndDestroy();
          resolve();
        });
        socket.on('error', () => resolve());
      });
    }
    const answer = await rawExchange(proxy.port(), h2cUpgrade());
    expect(answer.status).toBe(200);
  });
});
