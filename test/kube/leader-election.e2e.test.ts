import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import type { StatusUpdate } from '../../src/ir/status.ts';
import { createStatusWriter, type LeaderElector, startLeaderElection } from '../../src/kube/index.ts';
import type { KubeApiServer } from '../support/kube-api-server/index.ts';
import { CONTROLLER, captureLogs, eventually, gatewayClass, kubeConfigFor, withServer } from './helpers.ts';

let server: KubeApiServer | undefined;
const electors: LeaderElector[] = [];

afterEach(async () => {
  await Promise.all(electors.splice(0).map((e) => e.stop()));
  await server?.stop();
  server = undefined;
});

function elect(srv: KubeApiServer, identity: string, registry?: Registry, now?: () => number) {
  const events: string[] = [];
  const elector = startLeaderElection({
    kubeConfig: kubeConfigFor(srv),
    namespace: 'kube-system',
    name: 'clusterset-gateway',
    identity,
    leaseDurationMs: 1000,
    renewMs: 100,
    renewDeadlineMs: 500,
    logger: captureLogs().logger,
    onStartedLeading: () => events.push('started'),
    onStoppedLeading: () => events.push('stopped'),
    ...(registry ? { registry } : {}),
    ...(now ? { now } : {}),
  });
  electors.push(elector);
  return { elector, events };
}

const leaseRequests = (srv: KubeApiServer, verb: string) =>
  srv.requests.filter((r) => r.resource === 'leases' && r.verb === verb).length;

function lease(srv: KubeApiServer): Record<string, unknown> | undefined {
  return srv.get('leases', 'kube-system', 'clusterset-gateway')?.spec as Record<string, unknown> | undefined;
}

const classStatus: StatusUpdate = {
  kind: 'GatewayClass',
  name: 'clusterset',
  generation: 1,
  status: { conditions: [{ type: 'Accepted', status: 'True', reason: 'Accepted', message: '' }] },
};

describe('leader election on a coordination.k8s.io/v1 Lease', () => {
  it('elects exactly one of two replicas and records it in the Lease', async () => {
    server = await withServer();
    const registry = new Registry();
    const a = elect(server, 'replica-a', registry);
    const b = elect(server, 'replica-b');
    const leader = await eventually(
      () => (a.elector.isLeader ? a : b.elector.isLeader ? b : undefined),
      'a leader',
    );
    const follower = leader === a ? b : a;
    // Three more renewals, each one a chance for the follower to (wrongly) take over.
    const renewals = leaseRequests(server, 'update');
    await eventually(
      () => leaseRequests(server as KubeApiServer, 'update') >= renewals + 3,
      'three renewals',
    );
    expect(leader.elector.isLeader).toBe(true);
    expect(follower.elector.isLeader).toBe(false);
    expect(lease(server)?.holderIdentity).toBe(leader === a ? 'replica-a' : 'replica-b');
    expect(lease(server)?.renewTime).toMatch(/\.\d{6}Z$/);
    expect(follower.events).toEqual([]);
    const gauge = await registry.getSingleMetric('clusterset_gateway_leader')?.get();
    expect(gauge?.values[0]?.value).toBe(leader === a ? 1 : 0);
  });

  it('hands over when the leader stops, releasing the lease', async () => {
    server = await withServer();
    const a = elect(server, 'replica-a');
    await eventually(() => a.elector.isLeader, 'a leads');
    const b = elect(server, 'replica-b');
    await a.elector.stop();
    expect(a.events).toEqual(['started', 'stopped']);
    await eventually(() => b.elector.isLeader, 'b takes over');
    expect(lease(server)).toMatchObject({ holderIdentity: 'replica-b', leaseTransitions: 1 });
  });

  it('takes over a lease whose holder stopped renewing once it has expired', async () => {
    server = await withServer();
    server.create({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'clusterset-gateway', namespace: 'kube-system' },
      spec: {
        holderIdentity: 'crashed-replica',
        leaseDurationSeconds: 1,
        renewTime: '2025-01-01T00:00:00.000000Z',
        leaseTransitions: 3,
      },
    });
    let clock = 0;
    const a = elect(server, 'replica-a', undefined, () => clock);
    await eventually(() => leaseRequests(server as KubeApiServer, 'get') >= 3, 'three looks at the lease');
    clock += 999;
    const looks = leaseRequests(server, 'get');
    await eventually(() => leaseRequests(server as KubeApiServer, 'get') >= looks + 2, 'two more looks');
    // Not before the lease has been seen unchanged for its whole duration on our own clock.
    expect(a.elector.isLeader).toBe(false);
    clock += 2;
    await eventually(() => a.elector.isLeader, 'a takes over', 3000);
    expect(lease(server)).toMatchObject({ holderIdentity: 'replica-a', leaseTransitions: 4 });
  });

  it('stops leading once it cannot renew before the deadline, and leads again when the API server is back', async () => {
    server = await withServer();
    const a = elect(server, 'replica-a');
    await eventually(() => a.elector.isLeader, 'a leads');
    await server.stop();
    // isLeader (what the status writer checks before each write) turns false at the renew deadline, without
    // waiting for a request to fail.
    await eventually(() => !a.elector.isLeader, 'leadership lost', 2000);
    await eventually(() => a.events.includes('stopped'), 'onStoppedLeading', 2000);
    await server.start();
    await eventually(() => a.elector.isLeader, 'leads again', 3000);
    expect(a.events).toEqual(['started', 'stopped', 'started']);
  });

  it('gives up at once when another replica has taken the lease', async () => {
    server = await withServer();
    const a = elect(server, 'replica-a');
    await eventually(() => a.elector.isLeader, 'a leads');
    server.patch('leases', 'kube-system', 'clusterset-gateway', { spec: { holderIdentity: 'usurper' } });
    await eventually(() => !a.elector.isLeader, 'a steps down', 1000);
    expect(a.events).toEqual(['started', 'stopped']);
  });

  it('a new leader writes the statuses it already had, without waiting for a change', async () => {
    server = await withServer();
    server.create(gatewayClass());
    let elector: LeaderElector | undefined;
    const writer = createStatusWriter({
      kubeConfig: kubeConfigFor(server),
      controllerName: CONTROLLER,
      logger: captureLogs().logger,
      isLeader: () => elector?.isLeader ?? false,
    });
    // Translated before winning the lease: nothing written yet.
    await writer.write([classStatus]);
    expect(server.requests.filter((r) => r.subresource === 'status')).toHaveLength(0);
    const started: Promise<void>[] = [];
    elector = startLeaderElection({
      kubeConfig: kubeConfigFor(server),
      namespace: 'kube-system',
      name: 'clusterset-gateway',
      identity: 'replica-a',
      leaseDurationMs: 1000,
      renewMs: 100,
      logger: captureLogs().logger,
      onStartedLeading: () => started.push(writer.rewrite()),
    });
    electors.push(elector);
    await eventually(() => started.length === 1, 'leading');
    await started[0];
    expect(server.get('gatewayclasses', undefined, 'clusterset')?.status).toMatchObject({
      conditions: [{ type: 'Accepted', status: 'True' }],
    });
  });

  it('with two replicas writing the same statuses, only the leader writes, once', async () => {
    server = await withServer();
    server.create(gatewayClass());
    const replicas = ['replica-a', 'replica-b'].map((id) => {
      const { elector } = elect(server as KubeApiServer, id);
      const writer = createStatusWriter({
        kubeConfig: kubeConfigFor(server as KubeApiServer),
        controllerName: CONTROLLER,
        logger: captureLogs().logger,
        isLeader: () => elector.isLeader,
      });
      return { elector, writer };
    });
    await eventually(() => replicas.some((r) => r.elector.isLeader), 'a leader');
    await Promise.all(replicas.map((r) => r.writer.write([classStatus])));
    await Promise.all(replicas.map((r) => r.writer.write([classStatus])));
    const statusPatches = server.requests.filter((r) => r.subresource === 'status' && r.verb === 'patch');
    expect(statusPatches).toHaveLength(1);
    expect(server.get('gatewayclasses', undefined, 'clusterset')?.status).toMatchObject({
      conditions: [{ type: 'Accepted', status: 'True' }],
    });
  });
});
