import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import type { Snapshot } from '../../src/snapshot/snapshot.ts';
import { createKubeSource, type KubeSource } from '../../src/sources/kube/index.ts';
import type { KubeApiServer } from '../support/kube-api-server/index.ts';
import {
  captureLogs,
  eventually,
  GATEWAY_API,
  gatewayClass,
  kubeConfigFor,
  SnapshotRecorder,
  service,
  withServer,
} from './helpers.ts';

/**
 * Issue 28: Secrets and ConfigMaps that nothing references are kept as their identity only; one that a Gateway,
 * ListenerSet or BackendTLSPolicy starts to reference is fetched before the next snapshot, and trimmed again
 * once the reference goes. Real list/watch/GET against the API test server.
 */

let server: KubeApiServer | undefined;
let source: KubeSource | undefined;

afterEach(async () => {
  await source?.stop();
  await server?.stop();
  source = undefined;
  server = undefined;
});

function startSource(srv: KubeApiServer) {
  const logs = captureLogs();
  const recorder = new SnapshotRecorder();
  const registry = new Registry();
  source = createKubeSource({
    kubeConfig: kubeConfigFor(srv),
    logger: logs.logger,
    debounceMs: 20,
    maxDebounceMs: 200,
    backoffInitialMs: 20,
    backoffMaxMs: 200,
    discoveryIntervalMs: 100,
    registry,
  });
  void source.start(recorder.onSnapshot);
  return { source, recorder, logs, registry };
}

async function watchEvents(registry: Registry, kind: string, type: string): Promise<number> {
  const metric = await registry.getSingleMetric('clusterset_gateway_watch_events_total')?.get();
  return metric?.values.find((v) => v.labels.kind === kind && v.labels.type === type)?.value ?? 0;
}

const CERT = Buffer.from('-----BEGIN CERTIFICATE-----\nnot-really\n-----END CERTIFICATE-----\n').toString(
  'base64',
);
const KEY = Buffer.from(
  '-----BEGIN PRIVATE KEY-----\nsecret-key-material\n-----END PRIVATE KEY-----\n',
).toString('base64');
const CA = '-----BEGIN CERTIFICATE-----\nsome-ca\n-----END CERTIFICATE-----\n';

function tlsSecret(name: string, data: Record<string, string> = { 'tls.crt': CERT, 'tls.key': KEY }) {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name,
      namespace: 'default',
      labels: { app: 'shop' },
      annotations: { 'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify({ data }) },
    },
    type: 'kubernetes.io/tls',
    data,
  };
}

function caConfigMap(name: string) {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: 'default' },
    data: { 'ca.crt': CA, other: 'x'.repeat(1000) },
  };
}

/** A Gateway whose HTTPS listener names `secret` and whose frontend validation names `configMap`. */
function httpsGateway(secret: string | undefined, configMap?: string) {
  return {
    apiVersion: GATEWAY_API,
    kind: 'Gateway',
    metadata: { name: 'gw', namespace: 'default' },
    spec: {
      gatewayClassName: 'clusterset',
      listeners: [
        { name: 'http', port: 80, protocol: 'HTTP' },
        ...(secret
          ? [{ name: 'https', port: 443, protocol: 'HTTPS', tls: { certificateRefs: [{ name: secret }] } }]
          : []),
      ],
      ...(configMap
        ? {
            tls: {
              frontend: {
                default: {
                  validation: { caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: configMap }] },
                },
              },
            },
          }
        : {}),
    },
  };
}

function secretOf(snapshot: Snapshot, name: string) {
  return snapshot.get('Secret', 'default', name);
}

describe('Secrets and ConfigMaps nothing references are not kept in full (kube source)', () => {
  it('keeps an unreferenced one as its identity, fetches it once a Gateway references it, trims it when the reference goes', async () => {
    server = await withServer();
    server.create(gatewayClass());
    server.create(httpsGateway(undefined));
    server.create(tlsSecret('shop-cert'));
    server.create(caConfigMap('client-ca'));
    const { recorder, logs } = startSource(server);

    const first = await recorder.waitFor(() => true, 'initial snapshot');
    const stored = secretOf(first, 'shop-cert');
    // What is kept: the identity, nothing a reader could use (labels and kubectl's copy of the data included).
    expect(stored).toEqual({
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'kubernetes.io/tls',
      metadata: {
        name: 'shop-cert',
        namespace: 'default',
        uid: expect.any(String),
        resourceVersion: expect.any(String),
      },
    });
    expect(first.get('ConfigMap', 'default', 'client-ca')).not.toHaveProperty('data');

    // The Gateway starts to reference both: the first snapshot that holds the listener holds their data too.
    server.patch(
      'gateways.gateway.networking.k8s.io',
      'default',
      'gw',
      httpsGateway('shop-cert', 'client-ca'),
    );
    const referenced = await recorder.waitFor(
      (s) => (s.get('Gateway', 'default', 'gw')?.spec?.listeners?.length ?? 0) === 2,
      'the HTTPS listener',
    );
    expect(secretOf(referenced, 'shop-cert')?.data).toEqual({ 'tls.crt': CERT, 'tls.key': KEY });
    expect(referenced.get('ConfigMap', 'default', 'client-ca')?.data).toEqual({ 'ca.crt': CA });
    expect(secretOf(referenced, 'shop-cert')?.metadata.labels).toBeUndefined();

    // While referenced, a new version of the data arrives by the watch.
    const rotated = { 'tls.crt': Buffer.from('rotated').toString('base64'), 'tls.key': KEY };
    server.patch('secrets', 'default', 'shop-cert', { data: rotated });
    await recorder.waitFor(
      (s) => secretOf(s, 'shop-cert')?.data?.['tls.crt'] === rotated['tls.crt'],
      'rotation',
    );

    // The references go: the data goes with them.
    server.patch('gateways.gateway.networking.k8s.io', 'default', 'gw', {
      spec: { listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }], tls: null },
    });
    const dropped = await recorder.waitFor(
      (s) => (s.get('Gateway', 'default', 'gw')?.spec?.listeners?.length ?? 0) === 1,
      'the HTTPS listener removed',
    );
    expect(secretOf(dropped, 'shop-cert')).not.toHaveProperty('data');
    expect(dropped.get('ConfigMap', 'default', 'client-ca')).not.toHaveProperty('data');

    // Secret data never reaches the logs.
    const logged = JSON.stringify(logs.lines);
    for (const value of [CERT, KEY, rotated['tls.crt'], 'secret-key-material'])
      expect(logged).not.toContain(value);
  });

  it('counts ListenerSet certificateRefs, a Gateway backend client certificate and BackendTLSPolicy CA refs', async () => {
    server = await withServer();
    server.create(gatewayClass());
    server.create(httpsGateway(undefined));
    for (const name of ['set-cert', 'client-cert', 'other']) server.create(tlsSecret(name));
    server.create(caConfigMap('backend-ca'));
    const { recorder } = startSource(server);
    await recorder.waitFor(() => true, 'initial snapshot');

    server.create({
      apiVersion: GATEWAY_API,
      kind: 'ListenerSet',
      metadata: { name: 'set', namespace: 'default' },
      spec: {
        parentRef: { name: 'gw' },
        listeners: [
          { name: 'https', port: 443, protocol: 'HTTPS', tls: { certificateRefs: [{ name: 'set-cert' }] } },
        ],
      },
    });
    server.patch('gateways.gateway.networking.k8s.io', 'default', 'gw', {
      spec: { tls: { backend: { clientCertificateRef: { name: 'client-cert' } } } },
    });
    server.create(service('web'));
    server.create({
      apiVersion: GATEWAY_API,
      kind: 'BackendTLSPolicy',
      metadata: { name: 'web-tls', namespace: 'default' },
      spec: {
        targetRefs: [{ group: '', kind: 'Service', name: 'web' }],
        validation: {
          caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'backend-ca' }],
          hostname: 'web',
        },
      },
    });
    const all = await recorder.waitFor(
      (s) =>
        s.get('ListenerSet', 'default', 'set') !== undefined &&
        s.get('BackendTLSPolicy', 'default', 'web-tls') !== undefined &&
        s.get('Gateway', 'default', 'gw')?.spec?.tls?.backend !== undefined,
      'the three referring objects',
    );
    expect(secretOf(all, 'set-cert')?.data?.['tls.key']).toBe(KEY);
    expect(secretOf(all, 'client-cert')?.data?.['tls.key']).toBe(KEY);
    expect(all.get('ConfigMap', 'default', 'backend-ca')?.data).toEqual({ 'ca.crt': CA });
    expect(secretOf(all, 'other')).not.toHaveProperty('data');
  });

  it('does not take a new version of an unreferenced Secret for a change', async () => {
    server = await withServer();
    server.create(gatewayClass());
    server.create(tlsSecret('unused'));
    const { recorder, registry } = startSource(server);
    const before = await recorder.waitFor(() => true, 'initial snapshot');
    server.patch('secrets', 'default', 'unused', { data: { 'tls.crt': CERT, 'tls.key': 'bmV3' } });
    await eventually(async () => (await watchEvents(registry, 'Secret', 'MODIFIED')) === 1, 'the event');
    // Any later full snapshot shows what the store holds after the event.
    server.create(service('marker'));
    const after = await recorder.waitFor(
      (s) => s.get('Service', 'default', 'marker') !== undefined,
      'marker',
    );
    // The stored object is the very one from before: the new data was no change to translate.
    expect(secretOf(after, 'unused')).toBe(secretOf(before, 'unused'));
  });

  it("never receives Helm release or service account token Secrets (the server's field selector leaves them out)", async () => {
    server = await withServer();
    server.create(gatewayClass());
    const helmRelease = (name: string) => ({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name, namespace: 'default', labels: { owner: 'helm' } },
      type: 'helm.sh/release.v1',
      data: { release: Buffer.from('x'.repeat(10_000)).toString('base64') },
    });
    server.create(helmRelease('sh.helm.release.v1.shop.v1'));
    server.create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: 'builder-token',
        namespace: 'default',
        annotations: { 'kubernetes.io/service-account.name': 'builder' },
      },
      type: 'kubernetes.io/service-account-token',
      data: { token: Buffer.from('a-token').toString('base64') },
    });
    server.create(tlsSecret('shop-cert'));
    const { recorder, registry } = startSource(server);
    const first = await recorder.waitFor(() => true, 'initial snapshot');
    expect([...first.byKey('Secret').keys()]).toEqual(['default/shop-cert']);

    // Watched the same way: a new release revision is no event; the certificate after it is the first one.
    server.create(helmRelease('sh.helm.release.v1.shop.v2'));
    server.create(tlsSecret('next-cert'));
    await eventually(async () => (await watchEvents(registry, 'Secret', 'ADDED')) >= 1, 'an event');
    expect(await watchEvents(registry, 'Secret', 'ADDED')).toBe(1);
    const next = await recorder.waitFor((s) => s.byKey('Secret').has('default/next-cert'), 'next-cert');
    expect([...next.byKey('Secret').keys()].sort()).toEqual(['default/next-cert', 'default/shop-cert']);
  });

  it('lists a GET it may not make as a problem, retries, and has the data once allowed', async () => {
    server = await withServer();
    server.create(gatewayClass());
    server.create(httpsGateway(undefined));
    server.create(tlsSecret('shop-cert'));
    server.setForbidden('secrets', ['get']);
    const { source: src, recorder } = startSource(server);
    await recorder.waitFor(() => true, 'initial snapshot');
    server.patch('gateways.gateway.networking.k8s.io', 'default', 'gw', httpsGateway('shop-cert'));
    await eventually(
      () =>
        src.problems.find((p) => p.includes('Secret default/shop-cert is referenced but could not be read')),
      'the problem',
    );
    // Translation goes on meanwhile (the listener reports the Secret's missing keys).
    await recorder.waitFor(
      (s) => (s.get('Gateway', 'default', 'gw')?.spec?.listeners?.length ?? 0) === 2,
      'listener',
    );
    server.clearForbidden('secrets');
    await recorder.waitFor(
      (s) => secretOf(s, 'shop-cert')?.data?.['tls.crt'] === CERT,
      'data after the grant',
      8000,
    );
    await eventually(() => src.problems.length === 0, 'no problem left');
  });

  it('holds 1,000 unreferenced large Secrets as a few hundred bytes each, and a referenced one in full', async () => {
    // What an unreferenced Secret costs does not grow with its data, so 64 KiB each shows it as well as 1 MiB
    // (etcd's limit), which would push a gigabyte through this test (15-40 s on a shared 2-core machine).
    // historyLimit: the test server keeps no copies for watch history; the Secrets exist before the list.
    server = await withServer({ historyLimit: 5 });
    server.create(gatewayClass());
    server.create(httpsGateway('big-0'));
    const size = 64 * 1024;
    const value = (i: number) => `${String(i).padStart(4, '0')}${'A'.repeat(size - 4)}`;
    for (let i = 0; i < 1000; i++)
      server.create(tlsSecret(`big-${i}`, { 'tls.crt': value(i), 'tls.key': KEY }));
    const { recorder } = startSource(server);
    const snapshot = await recorder.waitFor(() => true, 'initial snapshot', 60_000);

    const secrets = [...snapshot.byKey('Secret').values()];
    expect(secrets).toHaveLength(1000);
    const held = secrets
      .filter((s) => s.metadata.name !== 'big-0')
      .reduce((bytes, s) => bytes + JSON.stringify(s).length, 0);
    expect(held).toBeLessThan(999 * 300);
    const referenced = secretOf(snapshot, 'big-0')?.data?.['tls.crt'];
    expect(referenced?.length).toBe(size);
    expect(referenced?.startsWith('0000')).toBe(true);
  }, 90_000);
});

describe('objects are not kept with what nothing reads (kube source)', () => {
  it("drops kubectl apply's last-applied copy of an object, keeping its other annotations", async () => {
    server = await withServer();
    server.create(gatewayClass());
    const web = service('web');
    const applied = JSON.stringify(web);
    server.create({
      ...web,
      metadata: {
        name: 'web',
        namespace: 'default',
        annotations: {
          'kubectl.kubernetes.io/last-applied-configuration': applied,
          'clusterset-gateway.io/health-check-path': '/healthz',
        },
      },
    });
    server.create({
      ...service('plain'),
      metadata: {
        name: 'plain',
        namespace: 'default',
        annotations: { 'kubectl.kubernetes.io/last-applied-configuration': applied },
      },
    });
    const { recorder } = startSource(server);
    const snapshot = await recorder.waitFor(() => true, 'initial snapshot');
    expect(snapshot.get('Service', 'default', 'web')?.metadata.annotations).toEqual({
      'clusterset-gateway.io/health-check-path': '/healthz',
    });
    expect(snapshot.get('Service', 'default', 'plain')?.metadata).not.toHaveProperty('annotations');
  });
});
