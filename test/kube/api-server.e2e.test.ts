import { KubernetesObjectApi, PatchStrategy, Watch } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { KubeApiClient, KubeApiError } from '../../src/kube/api-client.ts';
import { endpointFromKubeConfig } from '../../src/kube/kubeconfig-endpoint.ts';
import type { KubeApiServer } from '../support/kube-api-server/index.ts';
import { eventually, gateway, httpRoute, kubeConfigFor, service, withServer } from './helpers.ts';

let server: KubeApiServer | undefined;

afterEach(async () => {
  await server?.stop();
  server = undefined;
});

async function failure(promise: Promise<unknown>): Promise<KubeApiError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof KubeApiError) return err;
    throw err;
  }
  throw new Error('expected the request to fail');
}

describe('Kubernetes API test server (driven by @kubernetes/client-node)', () => {
  it('serves discovery that KubernetesObjectApi resolves kinds with, and CRUD through it', async () => {
    server = await withServer();
    const api = KubernetesObjectApi.makeApiClient(kubeConfigFor(server));
    await api.create(gateway() as never);
    const read = (await api.read({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'Gateway',
      metadata: { name: 'gw', namespace: 'default' },
    })) as unknown as Record<string, { generation?: number; uid?: string }>;
    expect(read.metadata?.generation).toBe(1);
    expect(read.metadata?.uid).toMatch(/^[0-9a-f-]{36}$/);
    // The CRD's status default is applied on create, as the upstream schema says.
    expect(read.status).toMatchObject({
      conditions: [
        { type: 'Accepted', status: 'Unknown', reason: 'Pending' },
        { type: 'Programmed', status: 'Unknown', reason: 'Pending' },
      ],
    });
    await api.patch(
      {
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'Gateway',
        metadata: { name: 'gw', namespace: 'default', labels: { a: 'b' } },
      } as never,
      undefined,
      undefined,
      undefined,
      undefined,
      PatchStrategy.MergePatch,
    );
    expect(server.get('gateways', 'default', 'gw')?.metadata).toMatchObject({
      generation: 1,
      labels: { a: 'b' },
    });
    server.patch('gateways', 'default', 'gw', {
      spec: { listeners: [{ name: 'http', port: 8080, protocol: 'HTTP' }] },
    });
    expect(server.get('gateways', 'default', 'gw')?.metadata).toMatchObject({ generation: 2 });
    await api.delete({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'Gateway',
      metadata: { name: 'gw', namespace: 'default' },
    });
    expect(server.get('gateways', 'default', 'gw')).toBeUndefined();
  });

  it('rejects what kube-apiserver rejects', async () => {
    server = await withServer();
    const client = new KubeApiClient(endpointFromKubeConfig(kubeConfigFor(server)));
    const slice = (address: string) => ({
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: 'web-1' },
      addressType: 'IPv4',
      endpoints: [{ addresses: [address] }],
    });
    const loopback = await failure(
      client.request('POST', '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices', {
        body: slice('127.0.0.1'),
      }),
    );
    expect(loopback.statusCode).toBe(422);
    expect(loopback.message).toContain('may not be in the loopback range');
    const linkLocal = await failure(
      client.request('POST', '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices', {
        body: slice('169.254.1.1'),
      }),
    );
    expect(linkLocal.statusCode).toBe(422);
    await client.request('POST', '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices', {
      body: slice('10.0.0.1'),
    });

    const noPorts = await failure(
      client.request('POST', '/api/v1/namespaces/default/services', {
        body: { metadata: { name: 'x' }, spec: {} },
      }),
    );
    expect(noPorts.reason).toBe('Invalid');
    const badName = await failure(
      client.request('POST', '/api/v1/namespaces/default/services', { body: service('Not_A_Name') }),
    );
    expect(badName.statusCode).toBe(422);
    const elsewhere = await failure(
      client.request('POST', '/api/v1/namespaces/kube-system/services', { body: service('web') }),
    );
    expect(elsewhere.statusCode).toBe(400);
    const { metadata: _, ...unplaced } = service('web');
    const noNamespace = await failure(
      client.request('POST', '/api/v1/namespaces/missing/services', {
        body: { ...unplaced, metadata: { name: 'web' } },
      }),
    );
    expect(noNamespace.statusCode).toBe(404);
    const noClass = await failure(
      client.request('POST', '/apis/gateway.networking.k8s.io/v1/namespaces/default/gateways', {
        body: { ...gateway(), spec: { listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }] } },
      }),
    );
    expect(noClass.message).toContain('spec.gatewayClassName: Required value');

    await client.request('POST', '/apis/gateway.networking.k8s.io/v1/namespaces/default/httproutes', {
      body: httpRoute('r'),
    });
    const path = '/apis/gateway.networking.k8s.io/v1/namespaces/default/httproutes/r';
    // Custom resources refuse unconditional updates; strategic merge patch is for built-in types only.
    const unconditional = await failure(client.request('PUT', path, { body: httpRoute('r') }));
    expect(unconditional.statusCode).toBe(422);
    const strategic = await failure(
      client.request('PATCH', path, {
        body: { spec: {} },
        contentType: 'application/strategic-merge-patch+json',
      }),
    );
    expect(strategic.statusCode).toBe(415);
    const stale = await failure(
      client.request('PATCH', `${path}/status`, {
        body: { metadata: { resourceVersion: '1' }, status: { parents: [] } },
        contentType: 'application/merge-patch+json',
      }),
    );
    expect(stale.statusCode).toBe(409);
    expect(stale.reason).toBe('Conflict');
    // Status conditions must carry every field the CRD requires.
    const incomplete = await failure(
      client.request('PATCH', `${path}/status`, {
        body: {
          status: {
            parents: [
              {
                parentRef: { name: 'gw' },
                controllerName: 'example.com/c',
                conditions: [{ type: 'Accepted', status: 'True' }],
              },
            ],
          },
        },
        contentType: 'application/merge-patch+json',
      }),
    );
    expect(incomplete.statusCode).toBe(422);
    const missing = await failure(
      client.request('GET', '/apis/gateway.networking.k8s.io/v1/namespaces/default/httproutes/nope'),
    );
    expect(missing).toMatchObject({ statusCode: 404, reason: 'NotFound' });
    const lease = await failure(
      client.request('POST', '/apis/coordination.k8s.io/v1/namespaces/default/leases', {
        body: { metadata: { name: 'l' }, spec: { holderIdentity: 'a', renewTime: new Date().toISOString() } },
      }),
    );
    expect(lease.message).toContain('spec.renewTime');
  });

  it('updates status only through the status subresource, and never bumps generation for it', async () => {
    server = await withServer();
    const client = new KubeApiClient(endpointFromKubeConfig(kubeConfigFor(server)));
    const path = '/apis/gateway.networking.k8s.io/v1/namespaces/default/httproutes/r';
    await client.request('POST', '/apis/gateway.networking.k8s.io/v1/namespaces/default/httproutes', {
      body: httpRoute('r'),
    });
    const parents = [
      {
        parentRef: { name: 'gw' },
        controllerName: 'example.com/c',
        conditions: [
          {
            type: 'Accepted',
            status: 'True',
            reason: 'Accepted',
            message: '',
            lastTransitionTime: '2025-01-01T00:00:00Z',
          },
        ],
      },
    ];
    await client.request('PATCH', path, {
      body: { status: { parents } },
      contentType: 'application/merge-patch+json',
    });
    expect(server.get('httproutes', 'default', 'r')?.status).toBeUndefined();
    await client.request('PATCH', `${path}/status`, {
      body: { status: { parents }, spec: { hostnames: ['x'] } },
      contentType: 'application/merge-patch+json',
    });
    const stored = server.get('httproutes', 'default', 'r');
    // The CRD's schema defaults fill parentRef.group and kind, as kube-apiserver does.
    const defaulted = parents.map((p) => ({
      ...p,
      parentRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', ...p.parentRef },
    }));
    expect(stored?.status).toEqual({ parents: defaulted });
    expect(stored?.spec).not.toHaveProperty('hostnames');
    expect(stored?.metadata).toMatchObject({ generation: 1 });
    const rv = (stored?.metadata as { resourceVersion?: string } | undefined)?.resourceVersion;
    expect(rv).toMatch(/^\d+$/);
    // A no-op write does not create a new resourceVersion.
    await client.request('PATCH', `${path}/status`, {
      body: { status: { parents } },
      contentType: 'application/merge-patch+json',
    });
    expect(server.get('httproutes', 'default', 'r')?.metadata).toMatchObject({ resourceVersion: rv });
  });

  it('streams watch events with bookmarks, resumes from a resourceVersion and answers 410 for compacted history', async () => {
    server = await withServer({ bookmarkIntervalMs: 50 });
    const kc = kubeConfigFor(server);
    const first = server.create(service('a'));
    const fromRv = (first.metadata as { resourceVersion: string }).resourceVersion;
    server.create(service('b'));
    server.delete('services', 'default', 'a');
    const events: string[] = [];
    const watch = new Watch(kc);
    const req = await watch.watch(
      '/api/v1/namespaces/default/services',
      { resourceVersion: fromRv, allowWatchBookmarks: true, labelSelector: '!excluded' },
      (type, obj: { metadata?: { name?: string } }) =>
        events.push(type === 'BOOKMARK' ? type : `${type} ${obj.metadata?.name}`),
      () => undefined,
    );
    await eventually(() => events.includes('BOOKMARK'), 'a bookmark');
    req.abort();
    expect(events.slice(0, 2)).toEqual(['ADDED b', 'DELETED a']);

    server.expireHistory();
    const errors: unknown[] = [];
    await new Watch(kc).watch(
      '/api/v1/services',
      { resourceVersion: fromRv },
      (type, obj) => {
        if (type === 'ERROR') errors.push(obj);
      },
      () => undefined,
    );
    await eventually(() => errors.length > 0, 'the 410 event');
    expect(errors[0]).toMatchObject({ kind: 'Status', code: 410, reason: 'Expired' });
  });
});
