import { createServer, type Server } from 'node:http';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { gateway, gatewayClass, httpRoute, service, serviceSlice, yamlDocs } from '../support/manifests.ts';

/**
 * Issue 42, "Done when": the retry budget caps retries when every endpoint fails. Three backends answer every
 * request 503 (slowly, so that many requests are in flight at once); a route retries 503 twice. Counted at the
 * backends: without a budget in the way, 40 requests make 120 attempts; with an XBackendTrafficPolicy budget of
 * at most 2 retrying requests (percent 0, minRetryRate count 2), the others get 503 at their first retry.
 */
const NS = 'shop';
const REQUESTS = 40;
const DELAY_MS = 300;

interface Counting {
  readonly server: Server;
  port: number;
  attempts: Map<string, number>;
}

async function failingBackend(): Promise<Counting> {
  const attempts = new Map<string, number>();
  const server = createServer((req, res) => {
    const path = req.url ?? '';
    attempts.set(path, (attempts.get(path) ?? 0) + 1);
    setTimeout(() => res.writeHead(503, { 'content-type': 'text/plain' }).end('down\n'), DELAY_MS);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as { port: number }).port, attempts };
}

describe('retry budget', () => {
  let gw: GatewayProcess;
  let port: number;
  let backends: Counting[] = [];
  const agent = new Agent({ connections: REQUESTS });

  beforeAll(async () => {
    backends = [await failingBackend(), await failingBackend(), await failingBackend()];
    port = await freePort();
    const rule = (service: string, path: string) => ({
      matches: [{ path: { type: 'PathPrefix', value: path } }],
      backendRefs: [{ name: service, port: 80 }],
      retry: { codes: [503], attempts: 2 },
    });
    gw = await startGateway({
      // The flags' budget leaves every retry through: only the policy's budget caps.
      args: ['--retry-budget-min-concurrency', '1000', '--no-health-checks'],
      manifests: {
        'budget.yaml': yamlDocs(
          gatewayClass(),
          gateway('edge', NS, [{ name: 'http', protocol: 'HTTP', port }]),
          service('capped', NS),
          service('free', NS),
          ...backends.flatMap((b, i) => [
            serviceSlice(`capped-${i}`, 'capped', NS, { port: b.port }),
            serviceSlice(`free-${i}`, 'free', NS, { port: b.port }),
          ]),
          httpRoute('routes', NS, {
            parentRefs: [{ name: 'edge' }],
            rules: [rule('capped', '/capped'), rule('free', '/free')],
          }),
          {
            apiVersion: 'gateway.networking.x-k8s.io/v1alpha1',
            kind: 'XBackendTrafficPolicy',
            metadata: { name: 'two-retries', namespace: NS },
            spec: {
              targetRefs: [{ group: '', kind: 'Service', name: 'capped' }],
              retryConstraint: { budget: { percent: 0 }, minRetryRate: { count: 2, interval: '1s' } },
            },
          },
        ),
      },
    });
  }, 30_000);

  afterAll(async () => {
    await gw?.stop();
    await agent.close();
    for (const b of backends) await new Promise<void>((resolve) => b.server.close(() => resolve()));
  });

  const attemptsAt = (path: string) => backends.reduce((sum, b) => sum + (b.attempts.get(path) ?? 0), 0);

  async function burst(path: string): Promise<{ status: number; body: string }[]> {
    return Promise.all(
      Array.from({ length: REQUESTS }, async () => {
        const response = await request(`http://127.0.0.1:${port}${path}`, { dispatcher: agent });
        return { status: response.statusCode, body: (await response.body.text()).trim() };
      }),
    );
  }

  async function metric(name: string, labels: string): Promise<number> {
    const text = (await gw.adminGet('/metrics')).body;
    const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(labels));
    return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
  }

  it('without a budget in the way, every request makes all its attempts', async () => {
    const answers = await burst('/free');
    expect(answers.every((a) => a.status === 503 && a.body === 'down')).toBe(true);
    expect(attemptsAt('/free')).toBe(REQUESTS * 3);
  });

  it("the policy's budget caps the retries; the others get 503 at their first retry", async () => {
    const answers = await burst('/capped');
    const refused = answers.filter((a) => a.body === 'retry budget exhausted');
    const retried = REQUESTS - refused.length;
    expect(answers.every((a) => a.status === 503)).toBe(true);
    // Two at a time may retry; a few more only if the first pair finished before the others failed once.
    expect(retried).toBeGreaterThanOrEqual(2);
    expect(retried).toBeLessThanOrEqual(6);
    expect(attemptsAt('/capped')).toBe(REQUESTS + retried * 2);
    const backend = `backend="Service/${NS}/capped:80"`;
    expect(await metric('clusterset_gateway_upstream_retry_budget_exhausted_total', backend)).toBe(
      refused.length,
    );
    expect(await metric('clusterset_gateway_upstream_retries_total', backend)).toBe(retried * 2);
  });

  it('shows the budget and the policy status in /config_dump', async () => {
    const dump = JSON.parse((await gw.adminGet('/config_dump')).body) as {
      balancers: Record<string, { retryBudget: Record<string, unknown> }>;
      statuses: Record<
        string,
        { status: { ancestors: { conditions: { type: string; status: string }[] }[] } }
      >;
    };
    expect(dump.balancers[`Service/${NS}/capped:80`]?.retryBudget).toMatchObject({
      percent: 0,
      minConcurrency: 2,
      source: `XBackendTrafficPolicy/${NS}/two-retries`,
      activeRequests: 0,
      activeRetries: 0,
    });
    expect(dump.balancers[`Service/${NS}/free:80`]?.retryBudget).toMatchObject({
      percent: 20,
      minConcurrency: 1000,
      source: 'flags',
    });
    const status = dump.statuses[`XBackendTrafficPolicy/${NS}/two-retries`]?.status;
    expect(status?.ancestors).toHaveLength(1);
    expect(status?.ancestors[0]?.conditions).toContainEqual(
      expect.objectContaining({ type: 'Accepted', status: 'True' }),
    );
  });
});
