import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { gateway, gatewayClass, httpRoute, service, serviceSlice, yamlDocs } from '../support/manifests.ts';

const NS = 'shop';

/** Fails the first `fail` requests of each `?key=` with `code`, then answers 200 with the attempt number. */
function flakyBackend(): Promise<Server> {
  const attempts = new Map<string, number>();
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://backend');
    const key = url.searchParams.get('key') ?? '';
    const attempt = (attempts.get(key) ?? 0) + 1;
    attempts.set(key, attempt);
    const fail = Number(url.searchParams.get('fail') ?? 0);
    if (attempt <= fail) res.writeHead(Number(url.searchParams.get('code') ?? 500)).end(`failed ${attempt}`);
    else res.end(`attempt ${attempt}`);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

// HTTPRoute `retry` exists only in the Gateway API experimental channel; the file source validates with that
// channel, so the field is kept (the standard channel's schema would prune it, silently).
describe('the file source keeps experimental-channel fields: HTTPRoute retry works from a manifest file', () => {
  let backend: Server;
  let gw: GatewayProcess;
  let port: number;

  beforeAll(async () => {
    backend = await flakyBackend();
    port = await freePort();
    gw = await startGateway({
      manifests: {
        'all.yaml': yamlDocs(
          gatewayClass(),
          gateway('edge', NS, [{ name: 'http', protocol: 'HTTP', port }]),
          service('flaky', NS),
          serviceSlice('flaky-a', 'flaky', NS, { port: (backend.address() as AddressInfo).port, pod: 'p' }),
          httpRoute('retrying', NS, {
            parentRefs: [{ name: 'edge' }],
            rules: [
              {
                matches: [{ path: { type: 'PathPrefix', value: '/three' } }],
                retry: { codes: [500], attempts: 3 },
                backendRefs: [{ name: 'flaky', port: 80 }],
              },
              { backendRefs: [{ name: 'flaky', port: 80 }] },
            ],
          }),
        ),
      },
    });
  });

  afterAll(async () => {
    await gw?.stop();
    await new Promise((resolve) => backend?.close(resolve));
  });

  async function get(path: string): Promise<{ status: number; body: string }> {
    const response = await request(`http://127.0.0.1:${port}${path}`);
    return { status: response.statusCode, body: await response.body.text() };
  }

  it('is in the configuration the gateway serves', async () => {
    const dump = (await gw.adminGet('/config_dump')).body;
    expect(dump).toContain('"retry"');
  });

  it('two failures and a success within 3 retries: the client sees the success of the third attempt', async () => {
    expect(await get('/three?key=a&fail=2')).toEqual({ status: 200, body: 'attempt 3' });
  });

  it('more failures than retries: the client sees the last failure; codes not listed are not retried', async () => {
    expect(await get('/three?key=b&fail=5')).toEqual({ status: 500, body: 'failed 4' });
    expect(await get('/three?key=c&fail=1&code=503')).toEqual({ status: 503, body: 'failed 1' });
  });

  it('a rule without retry does not retry', async () => {
    expect(await get('/other?key=d&fail=1')).toEqual({ status: 500, body: 'failed 1' });
  });
});
