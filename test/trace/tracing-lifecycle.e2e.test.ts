import { Agent, request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { closeAll, type RunningEcho, startEchoes } from '../support/echo.ts';
import { eventually, freePort, type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { gateway, gatewayClass, httpRoute, service, serviceSlice, yamlDocs } from '../support/manifests.ts';
import { OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.ts';

const NS = 'shop';
const SERVER = 2;
// Long enough that nothing leaves on the batch timer while a test runs: what arrives was sent by the stop.
const HELD_BATCH_FLAGS = ['--trace-batch-delay-ms', '600000'];

/**
 * Tracing across a gateway's life: spans still queued when it stops are exported before it exits, and with
 * `--workers` every worker exports its own spans under its own service instance and flushes them when stopped.
 */
describe('tracing when the gateway stops, and with --workers (docs/tracing.md)', () => {
  let receiver: OtlpReceiver;
  let echoes: RunningEcho[];
  let gw: GatewayProcess | undefined;

  beforeAll(async () => {
    receiver = await OtlpReceiver.start();
    echoes = await startEchoes(['web-1'], { namespace: NS });
  });

  afterEach(async () => {
    await gw?.stop();
    gw = undefined;
    receiver.spans.length = 0;
  });

  afterAll(async () => {
    await closeAll(echoes);
    await receiver.close();
  });

  const start = async (extra: readonly string[]): Promise<number> => {
    const port = await freePort();
    gw = await startGateway({
      manifests: {
        'shop.yaml': yamlDocs(
          gatewayClass(),
          gateway('edge', NS, [{ name: 'http', protocol: 'HTTP', port }]),
          service('web', NS),
          serviceSlice('web-1', 'web', NS, { port: echoes[0]!.port, pod: 'web-1' }),
          httpRoute('web', NS, {
            parentRefs: [{ name: 'edge' }],
            rules: [{ backendRefs: [{ name: 'web', port: 80 }] }],
          }),
        ),
      },
      args: ['--otlp-endpoint', receiver.url, '--trace-export-timeout-ms', '2000', ...extra],
    });
    return port;
  };

  /** Requests with a traceparent of their own (trace ids `prefix` + index), each answered 200. */
  const send = async (port: number, prefix: string, count: number, dispatcher: Agent): Promise<string[]> => {
    const ids = Array.from(
      { length: count },
      (_, i) => `${prefix}${i.toString(16).padStart(32 - prefix.length, '0')}`,
    );
    await Promise.all(
      ids.map(async (id) => {
        const res = await request(`http://127.0.0.1:${port}/`, {
          dispatcher,
          headers: { traceparent: `00-${id}-00f067aa0ba902b7-01` },
        });
        await res.body.dump();
        expect(res.statusCode).toBe(200);
      }),
    );
    return ids;
  };

  const serverSpansOf = (ids: readonly string[]): ReceivedSpan[] =>
    receiver.spans.filter((s) => s.kind === SERVER && ids.includes(s.traceId));

  it('exports the spans still queued when it is stopped', async () => {
    const port = await start(HELD_BATCH_FLAGS);
    const agent = new Agent();
    const ids = await send(port, 'a1', 5, agent);
    await agent.close();
    expect(serverSpansOf(ids)).toHaveLength(0);

    await gw!.stop();
    expect(
      serverSpansOf(ids)
        .map((s) => s.traceId)
        .sort(),
    ).toEqual([...ids].sort());
    expect(gw!.output()).not.toMatch(/"level":(50|60)/);
  });

  /** 16 clients on new connections at once, `perClient` requests each: the kernel spreads them over the workers. */
  const sendSpread = async (port: number, prefix: string, perClient: number): Promise<string[]> => {
    const clients = Array.from({ length: 16 }, () => new Agent());
    const ids = await Promise.all(
      clients.map((c, i) => send(port, `${prefix}${i.toString(16)}`, perClient, c)),
    );
    await Promise.all(clients.map((c) => c.close()));
    return ids.flat();
  };

  it('with --workers 2: each worker exports its spans as a service instance of its own', async () => {
    const port = await start(['--workers', '2', '--trace-batch-delay-ms', '50']);
    let round = 0;
    const instances = await eventually(async () => {
      const ids = await sendSpread(port, `b${(round++).toString(16).padStart(2, '0')}`, 4);
      const spans = await eventually(async () => {
        const found = serverSpansOf(ids);
        expect(found).toHaveLength(ids.length);
        return found;
      }, 10_000);
      const seen = new Map(spans.map((s) => [s.resource['service.instance.id'], s.resource['process.pid']]));
      expect(seen.size).toBe(2);
      return seen;
    }, 30_000);
    const pids = new Set(instances.values());
    expect(pids.size).toBe(2);
    expect(pids.has(gw!.pid)).toBe(false);
  });

  it('with --workers 2: stopping the gateway flushes what every worker still holds', async () => {
    const port = await start(['--workers', '2', ...HELD_BATCH_FLAGS]);
    const ids = await sendSpread(port, 'c', 4);
    expect(serverSpansOf(ids)).toHaveLength(0);

    await gw!.stop();
    expect(
      serverSpansOf(ids)
        .map((s) => s.traceId)
        .sort(),
    ).toEqual([...ids].sort());
  });
});
