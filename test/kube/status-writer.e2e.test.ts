import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import type { StatusUpdate } from '../../src/ir/status.ts';
import { createStatusWriter } from '../../src/kube/index.ts';
import type { Condition } from '../../src/snapshot/resources.ts';
import type { KubeApiServer } from '../support/kube-api-server/index.ts';
import {
  CONTROLLER,
  captureLogs,
  gateway,
  gatewayClass,
  httpRoute,
  kubeConfigFor,
  withServer,
} from './helpers.ts';

let server: KubeApiServer | undefined;

afterEach(async () => {
  await server?.stop();
  server = undefined;
});

const OTHER_CONTROLLER = 'example.com/other-controller';

function cond(type: string, status: Condition['status'], reason: string, message = ''): Condition {
  return { type, status, reason, message };
}

function routeStatus(
  accepted: Condition['status'] = 'True',
  reason = 'Accepted',
  message = '',
): StatusUpdate {
  return {
    kind: 'HTTPRoute',
    namespace: 'default',
    name: 'web',
    generation: 1,
    status: {
      parents: [
        {
          parentRef: {
            group: 'gateway.networking.k8s.io',
            kind: 'Gateway',
            namespace: 'default',
            name: 'gw',
          },
          controllerName: CONTROLLER,
          conditions: [
            cond('Accepted', accepted, reason, message),
            cond('ResolvedRefs', 'True', 'ResolvedRefs'),
          ],
        },
      ],
    },
  };
}

const classStatus: StatusUpdate = {
  kind: 'GatewayClass',
  name: 'clusterset',
  generation: 1,
  status: { conditions: [cond('Accepted', 'True', 'Accepted')], supportedFeatures: [{ name: 'HTTPRoute' }] },
};

const gatewayStatus: StatusUpdate = {
  kind: 'Gateway',
  namespace: 'default',
  name: 'gw',
  generation: 1,
  status: {
    addresses: [{ type: 'IPAddress', value: '10.0.0.1' }],
    conditions: [cond('Accepted', 'True', 'Accepted'), cond('Programmed', 'True', 'Programmed')],
    listeners: [
      {
        name: 'http',
        attachedRoutes: 1,
        supportedKinds: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute' }],
        conditions: [
          cond('Accepted', 'True', 'Accepted'),
          cond('Programmed', 'True', 'Programmed'),
          cond('ResolvedRefs', 'True', 'ResolvedRefs'),
        ],
      },
    ],
  },
};

function otherParent(): Record<string, unknown> {
  return {
    parentRef: {
      group: 'gateway.networking.k8s.io',
      kind: 'Gateway',
      namespace: 'default',
      name: 'their-gw',
    },
    controllerName: OTHER_CONTROLLER,
    conditions: [
      {
        type: 'Accepted',
        status: 'False',
        reason: 'NotAllowedByListeners',
        message: 'theirs',
        lastTransitionTime: '2020-01-01T00:00:00Z',
      },
    ],
  };
}

async function setup(options: { leader?: () => boolean; now?: () => Date } = {}) {
  server = await withServer();
  server.create(gatewayClass());
  server.create(gateway());
  server.create(httpRoute('web'));
  const registry = new Registry();
  const logs = captureLogs();
  const writer = createStatusWriter({
    kubeConfig: kubeConfigFor(server),
    controllerName: CONTROLLER,
    logger: logs.logger,
    isLeader: options.leader ?? (() => true),
    registry,
    ...(options.now ? { now: options.now } : {}),
    retryMs: 60_000,
  });
  return { srv: server, writer, registry, logs };
}

async function writes(registry: Registry, kind: string, result: string): Promise<number> {
  const metric = await registry.getSingleMetric('clusterset_gateway_status_writes_total')?.get();
  return metric?.values.find((v) => v.labels.kind === kind && v.labels.result === result)?.value ?? 0;
}

type ParentStatus = { controllerName?: string; conditions: Record<string, unknown>[] } & Record<
  string,
  unknown
>;

function routeParents(srv: KubeApiServer): ParentStatus[] {
  const status = srv.get('httproutes', 'default', 'web')?.status as { parents?: ParentStatus[] } | undefined;
  return status?.parents ?? [];
}

function patches(srv: KubeApiServer): number {
  return srv.requests.filter((r) => r.verb === 'patch' && r.subresource === 'status').length;
}

describe('status writer', () => {
  it('writes GatewayClass, Gateway and HTTPRoute status through the status subresource', async () => {
    const { srv, writer } = await setup({ now: () => new Date('2025-03-01T10:00:00.500Z') });
    await writer.write([classStatus, gatewayStatus, routeStatus()]);
    const gc = srv.get('gatewayclasses', undefined, 'clusterset');
    expect(gc?.status).toEqual({
      conditions: [
        {
          type: 'Accepted',
          status: 'True',
          reason: 'Accepted',
          message: '',
          observedGeneration: 1,
          lastTransitionTime: '2025-03-01T10:00:00Z',
        },
      ],
      supportedFeatures: [{ name: 'HTTPRoute' }],
    });
    const gw = srv.get('gateways', 'default', 'gw')?.status as Record<string, unknown>;
    expect(gw.addresses).toEqual([{ type: 'IPAddress', value: '10.0.0.1' }]);
    expect(gw.listeners).toMatchObject([{ name: 'http', attachedRoutes: 1 }]);
    const route = { parents: routeParents(srv) };
    expect(route.parents).toHaveLength(1);
    expect(route.parents[0]).toMatchObject({ controllerName: CONTROLLER, parentRef: { name: 'gw' } });
    // Status writes never bump metadata.generation.
    expect(srv.get('httproutes', 'default', 'web')?.metadata).toMatchObject({ generation: 1 });
    expect(
      srv.requests
        .filter((r) => r.subresource === 'status')
        .every((r) => r.contentType === 'application/merge-patch+json'),
    ).toBe(true);
  });

  it('writes TLSRoute parents and BackendTLSPolicy ancestors', async () => {
    const { srv, writer } = await setup();
    srv.create({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'TLSRoute',
      metadata: { name: 'tls', namespace: 'default' },
      spec: { parentRefs: [{ name: 'gw' }], rules: [{ backendRefs: [{ name: 'web', port: 8443 }] }] },
    });
    srv.create({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'BackendTLSPolicy',
      metadata: { name: 'web', namespace: 'default' },
      spec: {
        targetRefs: [{ group: '', kind: 'Service', name: 'web' }],
        validation: { hostname: 'web.example.com' },
      },
    });
    const conditions = [cond('Accepted', 'True', 'Accepted')];
    await writer.write([
      { ...routeStatus(), kind: 'TLSRoute', name: 'tls' },
      {
        kind: 'BackendTLSPolicy',
        namespace: 'default',
        name: 'web',
        generation: 1,
        status: {
          ancestors: [
            {
              ancestorRef: {
                group: 'gateway.networking.k8s.io',
                kind: 'Gateway',
                namespace: 'default',
                name: 'gw',
              },
              controllerName: CONTROLLER,
              conditions,
            },
          ],
        },
      },
    ]);
    const route = srv.get('tlsroutes', 'default', 'tls')?.status as { parents?: ParentStatus[] };
    expect(route.parents).toMatchObject([{ controllerName: CONTROLLER, parentRef: { name: 'gw' } }]);
    const policy = (srv.get('backendtlspolicies', 'default', 'web')?.status ?? {}) as {
      ancestors?: ParentStatus[];
    };
    expect(policy.ancestors).toMatchObject([
      {
        controllerName: CONTROLLER,
        ancestorRef: { kind: 'Gateway', name: 'gw' },
        conditions: [{ type: 'Accepted' }],
      },
    ]);
  });

  it('writes a ClusterSelectionPolicy status in its own API group', async () => {
    const { srv, writer } = await setup();
    srv.create({
      apiVersion: 'policy.clusterset-gateway.io/v1alpha1',
      kind: 'ClusterSelectionPolicy',
      metadata: { name: 'eu-only', namespace: 'default' },
      spec: {
        targetRefs: [{ group: 'multicluster.x-k8s.io', kind: 'ServiceImport', name: 'web' }],
        tiers: [{ name: 'local', sameCluster: true }],
      },
    });
    await writer.write([
      {
        kind: 'ClusterSelectionPolicy',
        namespace: 'default',
        name: 'eu-only',
        generation: 1,
        status: {
          conditions: [
            cond('Accepted', 'False', 'TargetNotFound', 'no target exists: ServiceImport/default/web'),
          ],
          tiers: [{ name: 'local', clusters: ['paris'] }],
          clustersWithoutProperties: [],
        },
      },
    ]);
    const status = srv.get('clusterselectionpolicies', 'default', 'eu-only')?.status;
    expect(status).toMatchObject({
      conditions: [{ type: 'Accepted', status: 'False', reason: 'TargetNotFound', observedGeneration: 1 }],
      tiers: [{ name: 'local', clusters: ['paris'] }],
    });
  });

  it('leaves the parents entries of other controllers untouched', async () => {
    const { srv, writer } = await setup();
    srv.patch('httproutes', 'default', 'web', { status: { parents: [otherParent()] } }, 'status');
    await writer.write([routeStatus()]);
    const parents = { parents: routeParents(srv) }.parents;
    expect(parents).toHaveLength(2);
    expect(parents[0]).toEqual(otherParent());
    expect(parents[1]).toMatchObject({ controllerName: CONTROLLER });
    // Ours replaced, theirs kept, on a second change too.
    await writer.write([routeStatus('False', 'NotAllowedByListeners')]);
    const after = { parents: routeParents(srv) }.parents;
    expect(after).toHaveLength(2);
    expect(after[0]).toEqual(otherParent());
    expect(after[1]).toMatchObject({
      conditions: [{ type: 'Accepted', status: 'False' }, { type: 'ResolvedRefs' }],
    });
  });

  it("removes our entry from a route translation no longer names, keeping other controllers' entries", async () => {
    const { srv, writer, logs } = await setup();
    srv.patch('httproutes', 'default', 'web', { status: { parents: [otherParent()] } }, 'status');
    await writer.write([routeStatus()]);
    expect(routeParents(srv).map((p) => p.controllerName)).toEqual([OTHER_CONTROLLER, CONTROLLER]);
    // The route stopped naming our Gateway: translation has no status for it any more.
    await writer.write([classStatus]);
    expect(routeParents(srv)).toEqual([otherParent()]);
    expect(logs.lines.some((l) => l.msg === 'status entries of this controller removed')).toBe(true);
    // Pruned once: a later batch neither reads nor writes the route again.
    const before = srv.requests.filter((r) => r.resource === 'httproutes').length;
    await writer.write([classStatus]);
    expect(srv.requests.filter((r) => r.resource === 'httproutes').length).toBe(before);
  });

  it('after a restart, prunes stale entries of ours found on the server (TLSRoute, GRPCRoute, BackendTLSPolicy)', async () => {
    const { srv } = await setup();
    const ours = { ...otherParent(), controllerName: CONTROLLER };
    srv.patch('httproutes', 'default', 'web', { status: { parents: [otherParent(), ours] } }, 'status');
    srv.create({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'GRPCRoute',
      metadata: { name: 'rpc', namespace: 'default' },
      spec: { parentRefs: [{ name: 'gw' }] },
    });
    srv.patch('grpcroutes', 'default', 'rpc', { status: { parents: [ours] } }, 'status');
    srv.create({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'BackendTLSPolicy',
      metadata: { name: 'web', namespace: 'default' },
      spec: {
        targetRefs: [{ group: '', kind: 'Service', name: 'web' }],
        validation: { hostname: 'web.example.com', wellKnownCACertificates: 'System' },
      },
    });
    const ancestor = { ancestorRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gw' } };
    srv.patch(
      'backendtlspolicies',
      'default',
      'web',
      {
        status: {
          ancestors: [
            { ...ancestor, controllerName: CONTROLLER, conditions: otherParent().conditions },
            { ...ancestor, controllerName: OTHER_CONTROLLER, conditions: otherParent().conditions },
          ],
        },
      },
      'status',
    );
    // A fresh writer (a restarted replica) has never written these objects.
    const fresh = createStatusWriter({
      kubeConfig: kubeConfigFor(srv),
      controllerName: CONTROLLER,
      logger: captureLogs().logger,
      isLeader: () => true,
      retryMs: 60_000,
    });
    await fresh.write([classStatus]);
    expect(routeParents(srv)).toEqual([otherParent()]);
    expect(
      ((srv.get('grpcroutes', 'default', 'rpc')?.status ?? {}) as { parents: unknown[] }).parents,
    ).toEqual([]);
    const ancestors = (
      (srv.get('backendtlspolicies', 'default', 'web')?.status ?? {}) as { ancestors: ParentStatus[] }
    ).ancestors;
    expect(ancestors.map((a) => a.controllerName)).toEqual([OTHER_CONTROLLER]);
    fresh.stop();
  });

  it('re-reads and retries when another controller writes between its read and its write (409)', async () => {
    const { srv, writer, registry } = await setup();
    let raced = false;
    srv.onRequest = (req) => {
      if (!raced && req.verb === 'get' && req.resource === 'httproutes') {
        raced = true;
        srv.patch('httproutes', 'default', 'web', { status: { parents: [otherParent()] } }, 'status');
      }
    };
    await writer.write([routeStatus()]);
    expect(srv.requests.filter((r) => r.verb === 'patch' && r.status === 409)).toHaveLength(1);
    expect(await writes(registry, 'HTTPRoute', 'conflict')).toBe(1);
    expect(await writes(registry, 'HTTPRoute', 'written')).toBe(1);
    const parents = { parents: routeParents(srv) }.parents;
    expect(parents.map((p) => p.controllerName)).toEqual([OTHER_CONTROLLER, CONTROLLER]);
  });

  it('does not write when nothing changed, and counts it', async () => {
    const { srv, writer, registry } = await setup();
    await writer.write([classStatus, gatewayStatus, routeStatus()]);
    const rv = srv.get('httproutes', 'default', 'web')?.metadata;
    expect(patches(srv)).toBe(3);
    await writer.write([classStatus, gatewayStatus, routeStatus()]);
    expect(patches(srv)).toBe(3);
    expect(await writes(registry, 'HTTPRoute', 'unchanged')).toBe(1);
    // A writer that knows nothing (a new leader) reads, compares and still does not write.
    writer.resync();
    await writer.write([classStatus, gatewayStatus, routeStatus()]);
    expect(patches(srv)).toBe(3);
    expect(srv.get('httproutes', 'default', 'web')?.metadata).toEqual(rv);
  });

  it('moves lastTransitionTime only when a condition status changes', async () => {
    let now = new Date('2025-01-01T00:00:00Z');
    const { srv, writer } = await setup({ now: () => now });
    await writer.write([routeStatus('True', 'Accepted')]);
    const conditions = () => routeParents(srv)[0]?.conditions ?? [];
    now = new Date('2025-01-02T00:00:00Z');
    await writer.write([routeStatus('True', 'Accepted', 'new message')]);
    expect(conditions()[0]).toMatchObject({
      message: 'new message',
      lastTransitionTime: '2025-01-01T00:00:00Z',
    });
    now = new Date('2025-01-03T00:00:00Z');
    await writer.write([routeStatus('False', 'NotAllowedByListeners')]);
    expect(conditions()[0]).toMatchObject({ status: 'False', lastTransitionTime: '2025-01-03T00:00:00Z' });
    expect(conditions()[1]).toMatchObject({
      type: 'ResolvedRefs',
      lastTransitionTime: '2025-01-01T00:00:00Z',
    });
  });

  it('writes nothing unless it is the leader', async () => {
    let leader = false;
    const { srv, writer } = await setup({ leader: () => leader });
    await writer.write([routeStatus()]);
    expect(srv.requests.filter((r) => r.resource === 'httproutes')).toHaveLength(0);
    leader = true;
    await writer.write([routeStatus()]);
    expect(patches(srv)).toBe(1);
  });

  it('records a Warning Event when a condition turns bad, once', async () => {
    const { srv, writer } = await setup();
    await writer.write([routeStatus('True', 'Accepted')]);
    expect(srv.list('events')).toHaveLength(0);
    await writer.write([routeStatus('False', 'NotAllowedByListeners', 'no listener allows this route')]);
    await writer.write([routeStatus('False', 'NotAllowedByListeners', 'still not allowed')]);
    const events = srv.list('events');
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      type: 'Warning',
      reason: 'NotAllowedByListeners',
      message: 'parent gw: Accepted=False: no listener allows this route',
      involvedObject: { kind: 'HTTPRoute', namespace: 'default', name: 'web' },
      reportingComponent: CONTROLLER,
    });
  });

  it('counts and logs an RBAC denial on the status subresource', async () => {
    const { srv, writer, registry, logs } = await setup();
    srv.setForbidden('httproutes/status');
    await writer.write([routeStatus()]);
    expect(await writes(registry, 'HTTPRoute', 'error')).toBe(1);
    expect(logs.lines.some((l) => l.level === 50 && l.msg.includes('httproutes/status'))).toBe(true);
  });
});
