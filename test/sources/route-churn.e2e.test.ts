import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeAll, type RunningEcho, startEchoes } from '../support/echo.ts';
import { eventually, freePort, type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { gateway, gatewayClass, httpRoute, service, serviceSlice, yamlDocs } from '../support/manifests.ts';

/**
 * Issue 45: routes edited one after another in a folder of 2,000 HTTPRoutes while requests keep coming. Each
 * edit reaches the data plane (the route's header changes), and no request fails meanwhile: the file source parses
 * only the edited document, and the new table is swapped in under requests in flight.
 */
const NS = 'shop';
const ROUTES = 2000;
const PER_FILE = 1000;

const route = (i: number, generation: number) =>
  httpRoute(`r-${i}`, NS, {
    parentRefs: [{ name: 'edge' }],
    hostnames: [`h${i}.test`],
    rules: [
      {
        filters: [
          {
            type: 'RequestHeaderModifier',
            requestHeaderModifier: { set: [{ name: 'x-generation', value: String(generation) }] },
          },
        ],
        backendRefs: [{ name: 'web', port: 80 }],
      },
    ],
  });
const generations = Array.from({ length: ROUTES }, () => 0);
const routeFile = (file: number) =>
  yamlDocs(
    ...generations.slice(file * PER_FILE, (file + 1) * PER_FILE).map((g, i) => route(file * PER_FILE + i, g)),
  );

describe('route edits at 2,000 routes', () => {
  let echo: RunningEcho;
  let gw: GatewayProcess;
  let port: number;
  const agent = new Agent({ keepAliveTimeout: 30_000, connections: 4 });

  beforeAll(async () => {
    [echo] = (await startEchoes(['web-1'], { namespace: NS, service: 'web' })) as [RunningEcho];
    port = await freePort();
    gw = await startGateway({
      args: ['--max-manifest-objects', String(ROUTES + 10)],
      manifests: {
        'gateway.yaml': yamlDocs(
          gatewayClass(),
          gateway('edge', NS, [{ name: 'http', protocol: 'HTTP', port }]),
          service('web', NS),
          serviceSlice('web-1', 'web', NS, { port: echo.port, pod: 'web-1' }),
        ),
        'routes-0.yaml': routeFile(0),
        'routes-1.yaml': routeFile(1),
      },
    });
  }, 60_000);
  afterAll(async () => {
    await gw?.stop();
    await agent.close();
    if (echo) await closeAll([echo]);
  });

  const generationAt = async (i: number): Promise<{ status: number; generation: string | undefined }> => {
    const res = await request(`http://127.0.0.1:${port}/`, {
      dispatcher: agent,
      headers: { host: `h${i}.test` },
    });
    const text = await res.body.text();
    if (res.statusCode !== 200) return { status: res.statusCode, generation: undefined };
    const body = JSON.parse(text) as { headers: Record<string, string[]> };
    return { status: 200, generation: body.headers['X-Generation']?.[0] };
  };

  it('serves every request while routes change, and each edit takes effect', async () => {
    const failures: string[] = [];
    let served = 0;
    let running = true;
    const load = Promise.all(
      Array.from({ length: 4 }, async () => {
        while (running) {
          const i = Math.floor(Math.random() * ROUTES);
          try {
            const { status } = await generationAt(i);
            if (status === 200) served++;
            else failures.push(`h${i}.test: ${status}`);
          } catch (error) {
            failures.push(`h${i}.test: ${String(error)}`);
          }
        }
      }),
    );
    for (let edit = 1; edit <= 8; edit++) {
      const i = (edit * 613) % ROUTES;
      generations[i] = edit;
      const file = Math.floor(i / PER_FILE);
      await gw.writeManifest(`routes-${file}.yaml`, routeFile(file));
      await eventually(async () => {
        const { generation } = await generationAt(i);
        if (generation !== String(edit)) throw new Error(`h${i}.test still at generation ${generation}`);
      }, 20_000);
    }
    running = false;
    await load;
    expect(failures).toEqual([]);
    expect(served).toBeGreaterThan(0);
    // Routes not edited keep their header.
    expect((await generationAt(1)).generation).toBe('0');
  }, 120_000);
});
