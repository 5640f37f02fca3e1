import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backend, entry, send, simpleTable, startProxy, type TestProxy, to } from '../proxy/fixtures.ts';
import { closeAll, type RunningEcho, startEchoes } from '../support/echo.ts';
import { rawExchange } from './raw-client.ts';
import { REQUEST_CASES } from './request-corpus.ts';

async function rejected(proxy: TestProxy, reason: string): Promise<number> {
  const metric = await proxy.registry.getSingleMetric('clusterset_gateway_rejected_requests_total')?.get();
  return metric?.values.find((v) => v.labels['reason'] === reason)?.value ?? 0;
}

describe('hostile requests', () => {
  let echoes: RunningEcho[];
  let proxy: TestProxy;

  beforeAll(async () => {
    echoes = await startEchoes(['good']);
    const good = backend('good', [echoes[0]!.port]);
    proxy = await startProxy(simpleTable([entry([to(good)])], [good]), undefined, {
      limits: { headerTimeoutMs: 400 },
    });
  });
  afterAll(async () => {
    await proxy.close();
    await closeAll(echoes);
  });

  it.each(REQUEST_CASES)('$name -> $status', async ({ bytes, status, reason, closes = true }) => {
    const answer = await rawExchange(proxy.port(), bytes, { idleMs: closes ? 3_000 : 300 });
    expect(answer.status, answer.raw.slice(0, 200)).toBe(status);
    if (reason !== '') expect(answer.body).toBe(`${reason}\n`);
    if (status !== 0 && closes) expect(answer.head.toLowerCase()).toContain('connection: close');
    expect(answer.closed).toBe(closes);
  });

  it('the good route keeps serving, and each refusal was counted', async () => {
    const answer = await send(proxy.port(), '/after');
    expect(answer.status).toBe(200);
    expect(answer.echo().pod).toBe('good');
    expect(await rejected(proxy, 'duplicate host header')).toBeGreaterThanOrEqual(2);
    expect(await rejected(proxy, 'http version not supported')).toBeGreaterThanOrEqual(3);
    expect(await rejected(proxy, 'request header fields too large')).toBeGreaterThanOrEqual(2);
  });

  it('answers 408 to a client that sends its headers too slowly (slowloris)', async () => {
    const answer = await rawExchange(proxy.port(), ['GET / HTTP/1.1\r\nHost: exa', 'mple.com\r\n\r\n'], {
      pauseMs: 1_500,
      idleMs: 3_000,
    });
    expect(answer.status).toBe(408);
    expect(answer.body).toBe('request timeout\n');
    expect(await rejected(proxy, 'request timeout')).toBe(1);
  });

  it('never writes a raw error into a response under way: a bad pipelined request only closes', async () => {
    const good = 'GET /slow HTTP/1.1\r\nHost: example.com\r\n\r\n';
    const answer = await rawExchange(proxy.port(), `${good}GET / HTTP/2.0\r\nHost: example.com\r\n\r\n`);
    expect(answer.status).toBe(200);
    const statusLines = answer.raw.match(/HTTP\/1\.1 \d{3}/g) ?? [];
    // The first answer is whole; the second request's refusal follows it or the connection just closes.
    expect(statusLines[0]).toBe('HTTP/1.1 200');
    expect(statusLines.slice(1).every((s) => s === 'HTTP/1.1 505')).toBe(true);
  });
});
