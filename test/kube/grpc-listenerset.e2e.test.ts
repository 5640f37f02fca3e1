import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { translate } from '../../src/gateway/translate.ts';
import { createStatusWriter } from '../../src/kube/index.ts';
import { createKubeSource, type KubeSource } from '../../src/sources/kube/index.ts';
import type { KubeApiServer } from '../support/kube-api-server/index.ts';
import {
  CONTROLLER,
  captureLogs,
  GATEWAY_API,
  gatewayClass,
  kubeConfigFor,
  SnapshotRecorder,
  service,
  withServer,
} from './helpers.ts';

let server: KubeApiServer | undefined;
let source: KubeSource | undefined;

afterEach(async () => {
  await source?.stop();
  await server?.stop();
  source = undefined;
  server = undefined;
});

function objects(): Record<string, unknown>[] {
  return [
    gatewayClass(),
    {
      apiVersion: GATEWAY_API,
      kind: 'Gateway',
      metadata: { name: 'shared', namespace: 'default' },
      spec: {
        gatewayClassName: 'clusterset',
        allowedListeners: { namespaces: { from: 'Same' } },
        listeners: [{ name: 'http', port: 80, protocol: 'HTTP', hostname: 'gw.example.com' }],
      },
    },
    {
      apiVersion: GATEWAY_API,
      kind: 'ListenerSet',
      metadata: { name: 'team-a', namespace: 'default' },
      spec: {
        parentRef: { name: 'shared' },
        listeners: [{ name: 'grpc', port: 80, protocol: 'HTTP', hostname: 'grpc.example.com' }],
      },
    },
    service('echo'),
    {
      apiVersion: GATEWAY_API,
      kind: 'GRPCRoute',
      metadata: { name: 'echo', namespace: 'default' },
      spec: {
        parentRefs: [{ kind: 'ListenerSet', name: 'team-a' }],
        rules: [
          { matches: [{ method: { service: 'echo.Echo' } }], backendRefs: [{ name: 'echo', port: 8080 }] },
        ],
      },
    },
  ];
}

describe('GRPCRoute and ListenerSet through the Kubernetes API', () => {
  it('watches both kinds and writes their status through the status subresource', async () => {
    server = await withServer();
    for (const obj of objects()) server.create(obj);
    const logs = captureLogs();
    const recorder = new SnapshotRecorder();
    source = createKubeSource({
      kubeConfig: kubeConfigFor(server),
      logger: logs.logger,
      debounceMs: 20,
      maxDebounceMs: 200,
      backoffInitialMs: 20,
      backoffMaxMs: 200,
      discoveryIntervalMs: 100,
      registry: new Registry(),
    });
    void source.start(recorder.onSnapshot);
    const snapshot = await recorder.waitFor(
      (s) =>
        s.get('GRPCRoute', 'default', 'echo') !== undefined &&
        s.get('ListenerSet', 'default', 'team-a') !== undefined,
      'GRPCRoute and ListenerSet listed',
    );

    const result = translate(snapshot, {
      controllerName: CONTROLLER,
      identity: {},
      serviceImportKinds: [],
      gatewayAddresses: ['10.0.0.1'],
      eastWest: false,
    });
    const writer = createStatusWriter({
      kubeConfig: kubeConfigFor(server),
      controllerName: CONTROLLER,
      logger: logs.logger,
      isLeader: () => true,
      registry: new Registry(),
      retryMs: 60_000,
    });
    await writer.write(result.statuses);
    writer.stop();

    const set = server.get('listenersets', 'default', 'team-a')?.status as Record<string, unknown>;
    expect(set.conditions).toMatchObject([
      { type: 'Accepted', status: 'True', reason: 'Accepted' },
      { type: 'Programmed', status: 'True', reason: 'Programmed' },
    ]);
    expect(set.listeners).toMatchObject([{ name: 'grpc', attachedRoutes: 1 }]);
    const gw = server.get('gateways', 'default', 'shared')?.status as Record<string, unknown>;
    expect(gw.attachedListenerSets).toBe(1);
    const route = server.get('grpcroutes', 'default', 'echo')?.status as { parents: unknown[] };
    expect(route.parents).toMatchObject([
      {
        controllerName: CONTROLLER,
        parentRef: { group: 'gateway.networking.k8s.io', kind: 'ListenerSet', name: 'team-a' },
        conditions: [{ type: 'Accepted', status: 'True' }, { type: 'ResolvedRefs' }],
      },
    ]);
  });
});
