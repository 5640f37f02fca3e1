import { createServer, type Server, type ServerResponse } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { HttpFilter } from '../../src/ir/http-filters.ts';
import { createBalancerFactory } from '../../src/lb/index.ts';
import { closeAll, type RunningEcho, startEchoes } from '../support/echo.ts';
import { backend, entry, send, simpleTable, startProxy, type TestProxy, to } from './fixtures.ts';

/** A backend whose behaviour per path the test decides; it remembers the responses it holds open. */
function startBackend(
  handle: (path: string, res: ServerResponse) => void,
): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => handle(req.url ?? '/', res));
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ server, port: (server.address() as AddressInfo).port })),
  );
}

describe('hardening of the request path', () => {
  let proxy: TestProxy | undefined;
  let echoes: RunningEcho[] = [];
  const servers: Server[] = [];
  afterEach(async () => {
    await proxy?.close();
    proxy = undefined;
    await closeAll(echoes);
    echoes = [];
    for (const s of servers.splice(0)) {
      s.closeAllConnections();
      await new Promise((r) => s.close(r));
    }
  });

  it('matches regexes in linear time: a catastrophic pattern cannot stall other requests', async () => {
    echoes = await startEchoes(['regex', 'other']);
    const regex = backend('regex', [echoes[0]!.port]);
    const other = backend('other', [echoes[1]!.port]);
    const table = simpleTable(
      [
        entry([to(regex)], { path: { kind: 'RegularExpression', value: '/(a+)+' } }),
        entry([to(regex)], {
          path: { kind: 'PathPrefix', value: '/h' },
          headers: [{ kind: 'RegularExpression', name: 'x-id', value: '(a|aa)+' }],
        }),
        entry([to(other)], { path: { kind: 'PathPrefix', value: '/' } }),
      ],
      [regex, other],
    );
    proxy = await startProxy(table);
    const evil = `/${'a'.repeat(30)}!`;
    const [hostile, header, good] = await Promise.all([
      send(proxy.port(), evil),
      send(proxy.port(), '/h', { headers: { 'x-id': `${'a'.repeat(40)}!` } }),
      send(proxy.port(), '/fine'),
    ]);
    expect(hostile.echo().pod).toBe('other');
    expect(header.echo().pod).toBe('other');
    expect(good.echo().pod).toBe('other');
    expect((await send(proxy.port(), '/aaaa')).echo().pod).toBe('regex');
  }, 5_000);

  it('a header the upstream client refuses is a local 500, never held against the endpoint', async () => {
    echoes = await startEchoes(['only']);
    const only = backend('only', [echoes[0]!.port]);
    const bad: HttpFilter = {
      kind: 'RequestHeaderModifier',
      set: [{ name: 'x-bad', value: 'a\r\nx-injected: 1' }],
      add: [],
      remove: [],
    };
    const table = simpleTable(
      [
        entry([to(only, 1, [bad])], { path: { kind: 'PathPrefix', value: '/bad' } }),
        entry([to(only)], { path: { kind: 'PathPrefix', value: '/' } }),
      ],
      [only],
    );
    proxy = await startProxy(table, createBalancerFactory());
    for (let i = 0; i < 10; i++) {
      const answer = await send(proxy.port(), '/bad');
      expect(answer.status).toBe(500);
      expect(answer.text).toBe('invalid upstream request\n');
    }
    const state = proxy.proxy.describeBalancers()[only.id]!;
    expect(state.endpoints.map((e) => e.healthy)).toEqual([true]);
    expect((await send(proxy.port(), '/good')).status).toBe(200);
  });

  it('drains on close: requests in flight finish, answers say Connection: close, new connections are refused', async () => {
    const slow = await startBackend((_path, res) => {
      setTimeout(() => res.end('slow done\n'), 1_500);
    });
    servers.push(slow.server);
    const b = backend('slow', [slow.port]);
    proxy = await startProxy(simpleTable([entry([to(b)])], [b]), undefined, { drainTimeoutMs: 10_000 });
    const port = proxy.port();
    const inFlight = send(port, '/slow');
    await new Promise((r) => setTimeout(r, 200));
    const closing = proxy.proxy.close();
    proxy = undefined;
    await new Promise((r) => setTimeout(r, 100));
    const refused = await new Promise<string>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.on('connect', () => resolve('connected'));
      socket.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
    });
    expect(refused).toBe('ECONNREFUSED');
    const answer = await inFlight;
    expect(answer.status).toBe(200);
    expect(answer.text).toBe('slow done\n');
    expect(answer.headers.connection).toBe('close');
    await closing;
  });

  it('answers 504 when a backend never answers within the upstream response timeout', async () => {
    const silent = await startBackend(() => {});
    servers.push(silent.server);
    const b = backend('silent', [silent.port]);
    proxy = await startProxy(simpleTable([entry([to(b)])], [b]), undefined, {
      upstream: { responseTimeoutMs: 300 },
    });
    const answer = await send(proxy.port(), '/');
    expect(answer.status).toBe(504);
  });

  it('limits connections and queue per endpoint: past both, 503 with the reason', async () => {
    const held: ServerResponse[] = [];
    const holding = await startBackend((_path, res) => held.push(res));
    servers.push(holding.server);
    const b = backend('holding', [holding.port]);
    proxy = await startProxy(simpleTable([entry([to(b)])], [b]), undefined, {
      upstream: { connectionsPerEndpoint: 1, queuePerEndpoint: 1 },
    });
    const first = send(proxy.port(), '/1');
    const second = send(proxy.port(), '/2');
    await new Promise((r) => setTimeout(r, 200));
    const third = await send(proxy.port(), '/3');
    expect(third.status).toBe(503);
    expect(third.text).toBe('upstream connection limit reached\n');
    while (held.length < 1) await new Promise((r) => setTimeout(r, 20));
    held.shift()!.end('one\n');
    while (held.length < 1) await new Promise((r) => setTimeout(r, 20));
    held.shift()!.end('two\n');
    expect((await first).status).toBe(200);
    expect((await second).status).toBe(200);
  });

  it('cuts a client that stops reading its response after the send timeout', async () => {
    let backendSawClose = false;
    const chunk = Buffer.alloc(64 * 1024, 'x');
    const firehose = await startBackend((_path, res) => {
      res.on('close', () => {
        backendSawClose = true;
      });
      const pump = (): void => {
        while (!res.destroyed && res.write(chunk));
        if (!res.destroyed) res.once('drain', pump);
      };
      pump();
    });
    servers.push(firehose.server);
    const b = backend('firehose', [firehose.port]);
    proxy = await startProxy(simpleTable([entry([to(b)])], [b]), undefined, {
      limits: { sendTimeoutMs: 300 },
    });
    const socket = connect(proxy.port(), '127.0.0.1');
    socket.write('GET / HTTP/1.1\r\nHost: example.com\r\n\r\n');
    socket.pause();
    socket.on('error', () => {});
    // The paused client cannot see the close; the gateway's side shows it: the upstream is cancelled and the
    // refusal counted.
    const counted = async (): Promise<number> => {
      const metric = await proxy!.registry
        .getSingleMetric('clusterset_gateway_rejected_requests_total')
        ?.get();
      return metric?.values.find((v) => v.labels['reason'] === 'send timeout')?.value ?? 0;
    };
    while ((await counted()) < 1 || !backendSawClose) await new Promise((r) => setTimeout(r, 50));
    socket.destroy();
    expect(await counted()).toBe(1);
    expect(backendSawClose).toBe(true);
  });
});
