import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { Reconciler } from '../../src/controller/reconciler.ts';
import { createStatusWriter } from '../../src/kube/index.ts';
import { createBalancerFactory } from '../../src/lb/index.ts';
import { ProxyServer } from '../../src/proxy/index.ts';
import type { AnyResource } from '../../src/snapshot/resources.ts';
import { Snapshot } from '../../src/snapshot/snapshot.ts';
import { captureLogs, eventually, kubeConfigFor, withServer } from '../kube/helpers.ts';
import { send } from '../proxy/fixtures.ts';
import { closeAll, type RunningEcho, startEchoes } from '../support/echo.ts';
import type { KubeApiServer } from '../support/kube-api-server/index.ts';
import { CONTROLLER, gateway, gatewayClass, httpRoute, service, serviceSlice } from '../support/manifests.ts';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const config = (backendPort: number, pod: string): AnyResource[] =>
  [
    gatewayClass(),
    gateway('gw', 'default', [{ name: 'http', port: 80, protocol: 'HTTP' }]),
    httpRoute('web', 'default', {
      parentRefs: [{ name: 'gw' }],
      rules: [{ backendRefs: [{ name: 'web', port: 80 }] }],
    }),
    service('web', 'default'),
    serviceSlice('web-1', 'web', 'default', { port: backendPort, pod }),
  ].map((o) => ({ ...(o as AnyResource), metadata: { ...(o as AnyResource).metadata, generation: 1 } }));

describe('status writes off the routing path', () => {
  it('a hanging status write does not delay a new endpoint reaching the proxy', async () => {
    const echoes: RunningEcho[] = await startEchoes(['web-a', 'web-b']);
    cleanups.push(() => closeAll(echoes));
    const [a, b] = echoes as [RunningEcho, RunningEcho];
    const server: KubeApiServer = await withServer();
    cleanups.push(() => server.stop());
    // Status goes to the API server; the snapshots carry loopback endpoints it would refuse.
    for (const object of config(a.port, 'web-a'))
      if (object.kind !== 'EndpointSlice') server.create(object as never);

    // The API server stalls every request of the status writer until the test lets go.
    let release: () => void = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    cleanups.push(() => release());
    let held = 0;
    server.beforeRequest = (request) => {
      if (request.resource === 'httproutes' || request.subresource === 'status') {
        held++;
        return released;
      }
      return undefined;
    };

    const logs = captureLogs();
    const writer = createStatusWriter({
      kubeConfig: kubeConfigFor(server),
      controllerName: CONTROLLER,
      logger: logs.logger,
      isLeader: () => true,
      events: false,
    });
    cleanups.push(() => writer.stop());
    const proxy = new ProxyServer({
      host: '127.0.0.1',
      bindPort: () => 0,
      balancers: createBalancerFactory(),
      logger: logs.logger,
      drainTimeoutMs: 100,
    });
    cleanups.push(() => proxy.close());
    const reconciler = new Reconciler({
      translateOptions: () => ({
        controllerName: CONTROLLER,
        identity: {},
        serviceImportKinds: [],
        gatewayAddresses: ['127.0.0.1'],
        eastWest: false,
      }),
      apply: (result) => proxy.apply(result.table),
      publishStatuses: (result) => writer.write(result.statuses),
      logger: logs.logger,
      registry: new Registry(),
    });

    reconciler.submit(new Snapshot(config(a.port, 'web-a')));
    await reconciler.settled();
    const port = proxy.boundPorts().get(80) as number;
    expect((await send(port, '/')).echo().pod).toBe('web-a');
    await eventually(() => held > 0, 'the status writer to be stuck on the API server');

    // The endpoint moves to another pod while the status write still hangs.
    reconciler.submit(new Snapshot(config(b.port, 'web-b')));
    await reconciler.settled();
    expect((await send(port, '/')).echo().pod).toBe('web-b');
    expect(server.get('httproutes', 'default', 'web')?.status).toBeUndefined();

    // Once the API server answers again, the queued status is written.
    release();
    const parents = await eventually(() => {
      const status = server.get('httproutes', 'default', 'web')?.status as
        | { parents?: { controllerName: string }[] }
        | undefined;
      return status?.parents?.length ? status.parents : undefined;
    }, 'the route status');
    expect(parents.map((p) => p.controllerName)).toEqual([CONTROLLER]);
  });
});
