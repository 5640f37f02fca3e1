import { pino } from 'pino';
import { Registry } from 'prom-client';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ListenerMetrics } from '../../src/metrics/listener-metrics.ts';
import { ListenerBindings } from '../../src/proxy/listen/listener-bindings.ts';

const inUse = Object.assign(new Error('listen EADDRINUSE: address already in use 127.0.0.1:8080'), {
  code: 'EADDRINUSE',
});
const socket = { kind: 'http' as const, port: 8080, endpoint: '127.0.0.1:8080' };

describe('listener bindings: retries with capped backoff', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('retries after 250 ms, doubling up to the cap, until bound; the gauge follows', async () => {
    const registry = new Registry();
    const changes: boolean[] = [];
    const bindings = new ListenerBindings({
      logger: pino({ level: 'silent' }),
      retry: { maxMs: 1000 },
      metrics: new ListenerMetrics(registry),
      onChange: () => changes.push(bindings.list()[0]?.bound ?? false),
    });
    const attempts: number[] = [];
    const attempt = (): void => {
      attempts.push(Date.now());
      if (attempts.length < 5) bindings.failed('p', socket, inUse, attempt);
      else bindings.bound('p', socket);
    };
    const start = Date.now();
    attempt();
    expect(bindings.list()).toEqual([
      expect.objectContaining({ bound: false, code: 'EADDRINUSE', failures: 1, error: inUse.message }),
    ]);
    await vi.advanceTimersByTimeAsync(10_000);
    // 250, 500, 1000 (the cap), 1000.
    expect(attempts.map((t) => t - start)).toEqual([0, 250, 750, 1750, 2750]);
    expect(bindings.list()).toEqual([{ ...socket, bound: true }]);
    expect(changes).toEqual([false, false, false, false, true]);
    const text = await registry.metrics();
    expect(text).toContain('clusterset_gateway_listeners{kind="http",state="bound"} 1');
    expect(text).toContain('clusterset_gateway_listeners{kind="http",state="unbound"} 0');
    expect(text).toContain(
      'clusterset_gateway_listener_bind_failures_total{kind="http",code="EADDRINUSE"} 4',
    );
  });

  it('a socket that leaves the table is no longer retried', async () => {
    const bindings = new ListenerBindings({ logger: pino({ level: 'silent' }) });
    const retry = vi.fn();
    bindings.failed('p', socket, inUse, retry);
    bindings.forget('p');
    await vi.advanceTimersByTimeAsync(10_000);
    expect(retry).not.toHaveBeenCalled();
    expect(bindings.list()).toEqual([]);
  });
});
