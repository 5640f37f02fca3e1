import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BackendCluster, RouteTable, VirtualHost } from '../../src/ir/route-table.ts';
import { closeAll, type RunningEcho, startEchoes } from '../support/echo.ts';
import {
  backend,
  endpoint,
  entry,
  httpPort,
  listener,
  send,
  startProxy,
  type TestProxy,
  to,
  vhost,
} from './fixtures.ts';

/**
 * A table applied after another compiles only the virtual hosts that are not the very objects of the table in
 * force (what the translation thread's deltas keep), and serves exactly what a full compile of it would.
 */
describe('incremental compile', () => {
  let echoes: RunningEcho[];
  let proxy: TestProxy;
  const applied: { compiledHosts?: number }[] = [];
  const b: Record<string, BackendCluster> = {};
  const hosts: Record<string, VirtualHost> = {};

  const table = (virtualHosts: readonly VirtualHost[], backends: readonly BackendCluster[]): RouteTable => ({
    ports: [httpPort(80, [listener('http', undefined, virtualHosts)])],
    backends: Object.fromEntries(backends.map((c) => [c.id, c])),
  });

  beforeAll(async () => {
    const names = ['a', 'b', 'c', 'd', 'e'];
    echoes = await startEchoes(names.map((n) => ({ pod: n, service: n })));
    for (const [i, n] of names.entries()) b[n] = backend(n, [echoes[i]?.port ?? 0]);
    hosts.one = vhost('one.example', [entry([to(b.a as BackendCluster)], { route: 'default/one' })]);
    hosts.two = vhost('two.example', [entry([to(b.b as BackendCluster)], { route: 'default/two' })]);
    hosts.three = vhost('three.example', [
      entry([to(b.c as BackendCluster)], {
        route: 'default/three',
        path: { kind: 'PathPrefix', value: '/x' },
      }),
      entry([to(b.c as BackendCluster)], { route: 'default/three' }),
    ]);
    const logs = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split('\n')) {
          if (!line) continue;
          const record = JSON.parse(line) as { msg?: string; compiledHosts?: number };
          if (record.msg === 'routing table applied') applied.push(record);
        }
        done();
      },
    });
    proxy = await startProxy(table([hosts.one, hosts.two, hosts.three], Object.values(b)), undefined, {
      logger: pino({ level: 'info' }, logs),
    });
  });

  afterAll(async () => {
    await proxy.close();
    await closeAll(echoes);
  });

  const served = async (host: string, path = '/'): Promise<string | number> => {
    const answer = await send(proxy.port(), path, { host });
    return answer.status === 200 ? answer.echo().service : answer.status;
  };

  it('serves the edited host anew, the untouched one as before, and 404 for a removed one', async () => {
    expect(await served('one.example')).toBe('a');
    expect(await served('two.example')).toBe('b');
    expect(await served('three.example', '/x/1')).toBe('c');
    expect(applied.at(-1)?.compiledHosts).toBe(3);

    const two = vhost('two.example', [
      entry([to(b.d as BackendCluster)], {
        route: 'default/two',
        path: { kind: 'PathPrefix', value: '/new' },
      }),
    ]);
    const four = vhost('four.example', [entry([to(b.e as BackendCluster)], { route: 'default/four' })]);
    await proxy.proxy.apply(table([hosts.one as VirtualHost, two, four], Object.values(b)));

    // Only the edited and the added host were compiled; the kept one still counts its requests.
    expect(applied.at(-1)?.compiledHosts).toBe(2);
    expect(await served('one.example')).toBe('a');
    expect(await served('two.example', '/new/page')).toBe('d');
    expect(await served('two.example', '/')).toBe(404);
    expect(await served('three.example', '/x/1')).toBe(404);
    expect(await served('four.example')).toBe('e');
    const metrics = await proxy.registry.metrics();
    expect(metrics).toMatch(/clusterset_gateway_requests_total\{[^}]*route="default\/one"[^}]*\} 2/);
    expect(metrics).not.toContain('route="default/three"');
  });

  it('compiles a kept host again when a backend it sends to is compiled anew', async () => {
    const e = echoes[4] as RunningEcho;
    // Backend a now has echo e's endpoint: a new compiled backend.
    const moved: BackendCluster = { ...(b.a as BackendCluster), tiers: [[endpoint(e.port)]] };
    const others = Object.values(b).filter((c) => c.id !== moved.id);
    await proxy.proxy.apply(table([hosts.one as VirtualHost], [moved, ...others]));
    expect(applied.at(-1)?.compiledHosts).toBe(1);
    expect(await served('one.example')).toBe('e');
    expect(await served('four.example')).toBe(404);
  });
});
