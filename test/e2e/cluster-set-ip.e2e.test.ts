import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeAll, type RunningEcho, startEchoes } from '../support/echo.ts';
import { eventually, freePort, type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { gateway, gatewayClass, httpRoute, yamlDocs } from '../support/manifests.ts';

/**
 * KEP-1645 `status.endpointSliceObjects: Absent` from a YAML folder: an MCS implementation that publishes no
 * EndpointSlices (Cilium unless asked) leaves the gateway the import's ClusterSetIP; here that address is a
 * real backend on 127.0.0.1, so traffic through the gateway shows the import is served through it.
 */
const NS = 'shop';

function absentImport(name: string, port: number, ips: readonly string[]): unknown {
  return {
    apiVersion: 'multicluster.x-k8s.io/v1beta1',
    kind: 'ServiceImport',
    metadata: { name, namespace: NS },
    spec: {
      type: 'ClusterSetIP',
      ...(ips.length > 0 ? { ips } : {}),
      ports: [{ name: 'http', protocol: 'TCP', port }],
    },
    status: { endpointSliceObjects: 'Absent' },
  };
}

const importRef = (name: string, port: number) => ({
  group: 'multicluster.x-k8s.io',
  kind: 'ServiceImport',
  name,
  port,
});

describe('a ServiceImport whose EndpointSlices are Absent', () => {
  let gw: GatewayProcess;
  let listener: number;
  let vip: RunningEcho;

  beforeAll(async () => {
    [vip] = (await startEchoes(['clusterset-vip'], { namespace: NS, service: 'cart' })) as [RunningEcho];
    listener = await freePort();
    gw = await startGateway({
      args: ['--cluster', 'east'],
      manifests: {
        'imports.yaml': yamlDocs(
          gatewayClass(),
          gateway('edge', NS, [{ name: 'http', protocol: 'HTTP', port: listener }]),
          absentImport('cart', vip.port, ['127.0.0.1']),
          absentImport('orders', 80, []),
          httpRoute('imports', NS, {
            parentRefs: [{ name: 'edge' }],
            rules: [
              {
                matches: [{ path: { type: 'PathPrefix', value: '/cart' } }],
                backendRefs: [importRef('cart', vip.port)],
              },
              {
                matches: [{ path: { type: 'PathPrefix', value: '/orders' } }],
                backendRefs: [importRef('orders', 80)],
              },
            ],
          }),
        ),
      },
    });
  });

  afterAll(async () => {
    await gw?.stop();
    await closeAll(vip ? [vip] : []);
  });

  it('sends its requests to the ClusterSetIP on the import port', async () => {
    const answers = await eventually(async () => {
      const pods: string[] = [];
      for (let i = 0; i < 5; i++) {
        const response = await fetch(`http://127.0.0.1:${listener}/cart/items`);
        expect(response.status).toBe(200);
        pods.push(((await response.json()) as { pod: string }).pod);
      }
      return pods;
    }, 15_000);
    expect(answers).toEqual(Array(5).fill('clusterset-vip'));
  });

  it('answers 503 for an Absent import without ips, and serves the other routes', async () => {
    const response = await fetch(`http://127.0.0.1:${listener}/orders`);
    expect(response.status).toBe(503);
    expect(await response.text()).toBe('no healthy upstream\n');
    expect((await fetch(`http://127.0.0.1:${listener}/cart`)).status).toBe(200);
  });

  it('/config_dump shows the field on the backends and a problem line for each import', async () => {
    const dump = JSON.parse((await gw.adminGet('/config_dump')).body) as {
      routeTable: { backends: Record<string, { endpointSliceObjects?: string; tiers: { key: string }[][] }> };
      problems: string[];
    };
    const cart = dump.routeTable.backends[`ServiceImport/${NS}/cart:${vip.port}`];
    expect(cart?.endpointSliceObjects).toBe('Absent');
    expect(cart?.tiers.flat().map((e) => e.key)).toEqual([`127.0.0.1:${vip.port}`]);
    expect(dump.problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          new RegExp(
            `^warning: ServiceImport shop/cart: status.endpointSliceObjects is Absent: port ${vip.port} is served through its ClusterSetIP 127.0.0.1 as one endpoint`,
          ),
        ),
        'warning: ServiceImport shop/orders: status.endpointSliceObjects is Absent and spec.ips is empty: port 80 has no endpoints; its requests are answered 503 until the import has a ClusterSetIP or its MCS implementation publishes EndpointSlices',
      ]),
    );
    expect(dump.problems.filter((p) => p.includes('shop/orders'))).toHaveLength(1);
  });
});
