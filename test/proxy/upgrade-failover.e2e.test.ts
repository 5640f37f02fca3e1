import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BackendCluster } from '../../src/ir/route-table.ts';
import { createBalancerFactory } from '../../src/lb/balancer-factory.ts';
import { AccessLog } from '../../src/proxy/exchange/access-log.ts';
import { rawExchange } from '../hostile/raw-client.ts';
import { freePort } from '../support/gateway-process.ts';
import { endpoint, entry, simpleTable, startProxy, type TestProxy, to } from './fixtures.ts';

/**
 * Upgrades take the way every request takes (exchange/upgrade-exchange.ts): the balancer's pick, a connection
 * refused before the answer moved to another endpoint (and to another cluster's tier), and an access log line.
 */
type Line = Record<string, unknown>;

function memoryAccessLog(): { log: AccessLog; lines: Line[] } {
  const lines: Line[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const text of chunk.toString().split('\n')) if (text !== '') lines.push(JSON.parse(text) as Line);
      callback();
    },
  });
  return { log: new AccessLog(pino({ level: 'info', base: null, timestamp: false }, sink)), lines };
}

/** Accepts every upgrade with 101, echoes in upper case, and ends when the client does. */
function startEchoUpgrade(): Promise<{ server: Server; port: number; sockets: Set<Socket> }> {
  const sockets = new Set<Socket>();
  const server = createServer((_req, res) => res.end('not upgraded\n'));
  server.on('upgrade', (_req, socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.write('HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n');
    socket.on('data', (d: Buffer) => socket.write(d.toString().toUpperCase()));
    // A client that ends the tunnel ends it here too, as a WebSocket server closes on the client's close.
    socket.on('end', () => socket.end());
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ server, port: (server.address() as AddressInfo).port, sockets }),
    ),
  );
}

const upgrade = `GET /ws HTTP/1.1\r\nHost: example.com\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n`;

function cluster(name: string, tiers: BackendCluster['tiers']): BackendCluster {
  return {
    id: `Service/default/${name}:80`,
    kind: 'Service',
    namespace: 'default',
    name,
    port: 80,
    protocol: 'http1',
    trafficDistribution: 'Default',
    tiers,
  };
}

describe('upgrades through the exchange', () => {
  let up: Awaited<ReturnType<typeof startEchoUpgrade>>;
  let dead: number;
  const proxies: TestProxy[] = [];

  beforeAll(async () => {
    up = await startEchoUpgrade();
    dead = await freePort();
  });
  afterAll(async () => {
    for (const proxy of proxies) await proxy.close();
    for (const socket of up.sockets) socket.destroy();
    await new Promise((r) => up.server.close(r));
  });

  it('moves to another endpoint when the first refuses the connection, before the 101, and logs the upgrade', async () => {
    const { log, lines } = memoryAccessLog();
    // The refusing endpoint first in its tier: a round of picks reaches it.
    const b = cluster('ws', [[endpoint(dead), endpoint(up.port)]]);
    const proxy = await startProxy(simpleTable([entry([to(b)])], [b]), createBalancerFactory(), {
      accessLog: log,
    });
    proxies.push(proxy);
    for (let i = 0; i < 4; i++) {
      const answer = await rawExchange(proxy.port(), [upgrade, 'hello'], { pauseMs: 50, idleMs: 500 });
      expect(answer.status).toBe(101);
      expect(answer.body).toBe('HELLO');
    }
    const deadline = Date.now() + 5_000;
    while (lines.length < 4 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(lines).toHaveLength(4);
    for (const line of lines) {
      expect(line).toMatchObject({
        msg: 'access',
        method: 'GET',
        path: '/ws',
        backend: b.id,
        endpoint: `127.0.0.1:${up.port}`,
        status: 101,
        bytes: 5,
      });
    }
    // At least one upgrade met the refusing endpoint first and was sent again, unseen by its client.
    expect(lines.some((line) => line.attempts === 2 && line.failure === undefined)).toBe(true);
  });

  it('fails over to another cluster when every endpoint of the nearest one refuses', async () => {
    const { log, lines } = memoryAccessLog();
    const b = cluster('ws-far', [
      [endpoint(dead, { cluster: 'near', zone: 'near-a' })],
      [endpoint(up.port, { cluster: 'far', zone: 'far-a' })],
    ]);
    const proxy = await startProxy(simpleTable([entry([to(b)])], [b]), createBalancerFactory(), {
      accessLog: log,
    });
    proxies.push(proxy);
    const answer = await rawExchange(proxy.port(), [upgrade, 'far'], { pauseMs: 50, idleMs: 500 });
    expect(answer.status).toBe(101);
    expect(answer.body).toBe('FAR');
    const deadline = Date.now() + 5_000;
    while (lines.length < 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(lines[0]).toMatchObject({ status: 101, cluster: 'far', attempts: 2 });
  });

  it('answers 502 when no endpoint takes the connection, and logs how the last attempt failed', async () => {
    const { log, lines } = memoryAccessLog();
    const b = cluster('ws-none', [[endpoint(dead)]]);
    const proxy = await startProxy(simpleTable([entry([to(b)])], [b]), createBalancerFactory(), {
      accessLog: log,
    });
    proxies.push(proxy);
    const answer = await rawExchange(proxy.port(), upgrade, { idleMs: 2_000 });
    expect(answer.status).toBe(502);
    const deadline = Date.now() + 5_000;
    while (lines.length < 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(lines[0]).toMatchObject({ status: 502, failure: 'refused', endpoint: `127.0.0.1:${dead}` });
  });
});
