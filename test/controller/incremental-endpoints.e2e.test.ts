import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { Reconciler } from '../../src/controller/reconciler.ts';
import { createBalancerFactory } from '../../src/lb/index.ts';
import { ProxyServer } from '../../src/proxy/index.ts';
import type { AnyResource } from '../../src/snapshot/resources.ts';
import { Snapshot } from '../../src/snapshot/snapshot.ts';
import { captureLogs } from '../kube/helpers.ts';
import { send } from '../proxy/fixtures.ts';
import { closeAll, type RunningEcho, startEchoes } from '../support/echo.ts';
import { CONTROLLER, gateway, gatewayClass, httpRoute, service, serviceSlice } from '../support/manifests.ts';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const object = (o: unknown): AnyResource => o as AnyResource;

async function counter(registry: Registry, name: string, label: string, value: string): Promise<number> {
  const metric = await registry.getSingleMetric(name)?.get();
  return metric?.values.find((v) => v.labels[label] === value)?.value ?? 0;
}

describe('incremental data plane', () => {
  it('an EndpointSlice change updates only its backend in place: no translation, no recompile', async () => {
    const echoes = await startEchoes(['web-a', 'web-b', 'api-0']);
    cleanups.push(() => closeAll(echoes));
    const [webA, webB, api] = echoes as [RunningEcho, RunningEcho, RunningEcho];
    const logs = captureLogs();
    const registry = new Registry();
    const proxy = new ProxyServer({
      host: '127.0.0.1',
      bindPort: () => 0,
      balancers: createBalancerFactory(),
      logger: logs.logger,
      drainTimeoutMs: 100,
    });
    cleanups.push(() => proxy.close());
    let fullApplies = 0;
    const reconciler = new Reconciler({
      translateOptions: () => ({
        controllerName: CONTROLLER,
        identity: {},
        serviceImportKinds: [],
        gatewayAddresses: ['127.0.0.1'],
        eastWest: false,
      }),
      apply: (result) => {
        fullApplies++;
        return proxy.apply(result.table);
      },
      applyEndpoints: (backends) => proxy.applyEndpoints(backends),
      logger: logs.logger,
      registry,
    });
    const fixed = [
      gatewayClass(),
      gateway('gw', 'default', [{ name: 'http', port: 80, protocol: 'HTTP' }]),
      httpRoute('web', 'default', {
        parentRefs: [{ name: 'gw' }],
        rules: [
          {
            matches: [{ path: { type: 'PathPrefix', value: '/api' } }],
            backendRefs: [{ name: 'api', port: 80 }],
          },
          { backendRefs: [{ name: 'web', port: 80 }] },
        ],
      }),
      service('web', 'default'),
      service('api', 'default'),
      service('unused', 'default'),
      serviceSlice('api-1', 'api', 'default', { port: api.port, pod: 'api-0' }),
    ].map(object);
    const webSlice = (echo: RunningEcho) =>
      object(serviceSlice('web-1', 'web', 'default', { port: echo.port, pod: echo.identity.pod }));
    const unusedSlice = (port: number) => object(serviceSlice('unused-1', 'unused', 'default', { port }));
    const translations = () => counter(registry, 'clusterset_gateway_translations_total', 'result', 'ok');
    const updates = (kind: string) =>
      counter(registry, 'clusterset_gateway_data_plane_updates_total', 'kind', kind);

    reconciler.submit(new Snapshot([...fixed, webSlice(webA), unusedSlice(1)]));
    await reconciler.settled();
    const port = proxy.boundPorts().get(80) as number;
    expect((await send(port, '/')).echo().pod).toBe('web-a');
    expect((await send(port, '/api')).echo().pod).toBe('api-0');
    expect(await translations()).toBe(1);
    const apiBalancer = proxy.backends?.get('Service/default/api:80')?.balancer;
    const webBackend = proxy.backends?.get('Service/default/web:80');

    // The web pod moves: its endpoint set is replaced in place, nothing is translated or recompiled.
    reconciler.submit(new Snapshot([...fixed, webSlice(webB), unusedSlice(1)]));
    await reconciler.settled();
    expect((await send(port, '/')).echo().pod).toBe('web-b');
    expect((await send(port, '/api')).echo().pod).toBe('api-0');
    expect(await translations()).toBe(1);
    expect(fullApplies).toBe(1);
    expect(await updates('endpoints')).toBe(1);
    expect(proxy.backends?.get('Service/default/api:80')?.balancer).toBe(apiBalancer);
    expect(proxy.backends?.get('Service/default/web:80')).toBe(webBackend);
    expect(reconciler.last?.result.table.backends['Service/default/web:80']?.tiers[0]?.[0]?.port).toBe(
      webB.port,
    );

    // A slice of a Service no route sends to changes: nothing to apply.
    reconciler.submit(new Snapshot([...fixed, webSlice(webB), unusedSlice(2)]));
    await reconciler.settled();
    expect(await translations()).toBe(1);
    expect(await updates('unchanged')).toBe(1);

    // Every object read again as new copies with the same content (the file source): still nothing.
    const copies = [...fixed, webSlice(webB), unusedSlice(2)].map((o) => structuredClone(o));
    reconciler.submit(new Snapshot(copies));
    await reconciler.settled();
    expect(await translations()).toBe(1);
    expect(await updates('unchanged')).toBe(2);

    // A change translation must see (a new Service) that leaves the table as it was is translated, not recompiled.
    reconciler.submit(new Snapshot([...copies, object(service('other', 'default'))]));
    await reconciler.settled();
    expect(await translations()).toBe(2);
    expect(fullApplies).toBe(1);
    expect(await updates('unchanged')).toBe(3);

    // A route change is applied in full.
    const moved = object(
      httpRoute('web', 'default', {
        parentRefs: [{ name: 'gw' }],
        rules: [{ backendRefs: [{ name: 'api', port: 80 }] }],
      }),
    );
    reconciler.submit(
      new Snapshot([
        ...copies.filter((o) => !(o.kind === 'HTTPRoute')),
        moved,
        object(service('other', 'default')),
      ]),
    );
    await reconciler.settled();
    expect(await translations()).toBe(3);
    expect(fullApplies).toBe(2);
    expect((await send(port, '/')).echo().pod).toBe('api-0');
  });
});
