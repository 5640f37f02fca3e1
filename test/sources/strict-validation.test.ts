import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import type { Snapshot } from '../../src/snapshot/snapshot.ts';
import { FileSource, formatProblem } from '../../src/sources/file/file-source.ts';
import type { FieldValidation } from '../../src/sources/file/object-store.ts';

/** Mistakes beyond the HTTPRoute ones of test/validation/newcomer-mistakes.e2e.test.ts, read by the file source. */
let dir: string;
let source: FileSource | undefined;
let registry: Registry;
afterEach(async () => {
  await source?.stop();
  source = undefined;
  await rm(dir, { recursive: true, force: true });
});

async function load(
  files: Record<string, string>,
  fieldValidation: FieldValidation = 'Strict',
): Promise<{ snapshot: Snapshot; problems: string[] }> {
  dir = await mkdtemp(join(tmpdir(), 'strict-validation-'));
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
  registry = new Registry();
  source = new FileSource({
    dir,
    logger: pino({ level: 'silent' }),
    debounceMs: 0,
    registry,
    fieldValidation,
  });
  let snapshot: Snapshot | undefined;
  await source.start((s) => {
    snapshot = s;
  });
  return { snapshot: snapshot as Snapshot, problems: source.problems.map(formatProblem) };
}

const IMPORT = (spec: string) =>
  [
    'apiVersion: multicluster.x-k8s.io/v1alpha1',
    'kind: ServiceImport',
    'metadata:',
    '  name: web',
    '  namespace: shop',
    'spec:',
    spec,
    '',
  ].join('\n');

describe('strict validation of the file source, beyond HTTPRoute', () => {
  it('a CRD-typed ServiceImport field typo is refused at its line', async () => {
    const { problems, snapshot } = await load({
      'import.yaml': IMPORT('  type: ClusterSetIP\n  ports:\n  - port: 80\n    protocl: TCP'),
    });
    expect(problems).toEqual([
      'import.yaml:10: ServiceImport shop/web (not loaded): spec.ports[0].protocl: unknown field "protocl"',
    ]);
    expect(snapshot.serviceImports).toEqual([]);
  });

  it('status.endpointSliceObjects (KEP-1645) is read in both versions; a value outside Present | Absent is refused', async () => {
    const withStatus = (name: string, version: string, value: string) =>
      [
        `apiVersion: multicluster.x-k8s.io/${version}`,
        'kind: ServiceImport',
        `metadata: {name: ${name}, namespace: shop}`,
        'spec: {type: ClusterSetIP, ips: [242.0.0.7], ports: [{port: 80}]}',
        'status:',
        `  endpointSliceObjects: ${value}`,
        '',
      ].join('\n');
    const { problems, snapshot } = await load({
      'a.yaml': withStatus('absent', 'v1beta1', 'Absent'),
      'b.yaml': withStatus('present', 'v1alpha1', 'Present'),
      'c.yaml': withStatus('maybe', 'v1beta1', 'Maybe'),
    });
    expect(problems).toEqual([
      'c.yaml:6: ServiceImport shop/maybe (not loaded): status.endpointSliceObjects: Unsupported value: "Maybe": supported values: "Present", "Absent"',
    ]);
    expect(snapshot.serviceImports.map((s) => [s.metadata.name, s.status?.endpointSliceObjects])).toEqual([
      ['absent', 'Absent'],
      ['present', 'Present'],
    ]);
  });

  it('a ClusterProperty with a misspelled spec field', async () => {
    const { problems } = await load({
      'id.yaml': [
        'apiVersion: about.k8s.io/v1alpha1',
        'kind: ClusterProperty',
        'metadata: {name: cluster.clusterset.k8s.io}',
        'spec:',
        '  value: east',
        '  vaule: east',
        '',
      ].join('\n'),
    });
    expect(problems).toEqual([
      'id.yaml:6: ClusterProperty cluster.clusterset.k8s.io (not loaded): spec.vaule: unknown field "vaule"',
    ]);
  });

  it('an EndpointSlice with an unknown field in an endpoint, and one in its metadata', async () => {
    const { problems } = await load({
      'slice.yaml': [
        'apiVersion: discovery.k8s.io/v1',
        'kind: EndpointSlice',
        'metadata:',
        '  name: web-a',
        '  namespace: shop',
        '  labelz: {kubernetes.io/service-name: web}',
        'addressType: IPv4',
        'endpoints:',
        '- addresses: [10.0.0.1]',
        '  condition: {ready: true}',
        '',
      ].join('\n'),
    });
    expect(problems).toEqual([
      'slice.yaml:6: EndpointSlice shop/web-a (not loaded): metadata.labelz: unknown field "labelz"',
      'slice.yaml:10: EndpointSlice shop/web-a (not loaded): endpoints[0].condition: unknown field "condition"',
    ]);
  });

  it('a kind of another API group is reported; a kind Kubernetes serves that the gateway does not read is not', async () => {
    const { problems } = await load({
      'other.yaml': [
        'apiVersion: apps/v1',
        'kind: Deployment',
        'metadata: {name: web}',
        '---',
        'apiVersion: cert-manager.io/v1',
        'kind: Certificate',
        'metadata: {name: web, namespace: shop}',
        '---',
        'apiVersion: apps/v1',
        'kind: Deploymnet',
        'metadata: {name: api}',
        '',
      ].join('\n'),
    });
    expect(problems).toEqual([
      'other.yaml:6: Certificate shop/web (not loaded): kind: no matches for kind "Certificate" in version "cert-manager.io/v1" (no CustomResourceDefinition here serves the group "cert-manager.io")',
      'other.yaml:10: Deploymnet api (not loaded): kind: no matches for kind "Deploymnet" in version "apps/v1" (did you mean kind "Deployment"?)',
    ]);
    expect(await registry.getSingleMetricAsString('clusterset_gateway_invalid_objects')).toMatch(/ 2$/m);
  });

  it('a mistake in one item of a kind: List costs only that item, named at its line', async () => {
    const { problems, snapshot } = await load({
      'list.yaml': [
        'apiVersion: v1',
        'kind: List',
        'items:',
        '- apiVersion: v1',
        '  kind: Service',
        '  metadata: {name: a, namespace: shop}',
        '  spec: {ports: [{port: 80}]}',
        '- apiVersion: v1',
        '  kind: Service',
        '  metadata: {name: b, namespace: shop}',
        '  spec: {ports: [{port: 80}], selectr: {app: b}}',
        '',
      ].join('\n'),
    });
    expect(problems).toEqual([
      'list.yaml:11: Service shop/b (not loaded): spec.selectr: unknown field "selectr"',
    ]);
    expect(snapshot.services.map((s) => s.metadata.name)).toEqual(['a']);
  });

  it('an object with thousands of unknown fields lists twenty and a count', async () => {
    const fields = Array.from({ length: 500 }, (_, i) => `  f${i}: x`).join('\n');
    const { problems } = await load({
      'many.yaml': IMPORT(`  type: ClusterSetIP\n  ports: [{port: 80}]\n${fields}`),
    });
    expect(problems).toHaveLength(21);
    expect(problems[0]).toBe('many.yaml:9: ServiceImport shop/web (not loaded): spec.f0: unknown field "f0"');
    expect(problems[20]).toBe('many.yaml:29: ServiceImport shop/web (not loaded): ... and 480 more problems');
  });

  it('--validation warn: the object is loaded without the unknown field, the last of repeated keys wins, each is a warning', async () => {
    const { problems, snapshot } = await load(
      { 'import.yaml': IMPORT('  type: ClusterSetIP\n  type: Headless\n  ports: [{port: 80}]\n  prots: []') },
      'Warn',
    );
    expect(problems).toEqual([
      'import.yaml:8: warning: ServiceImport shop/web: spec.type: duplicate field "type" (dropped: --validation=warn)',
      'import.yaml:10: warning: ServiceImport shop/web: spec.prots: unknown field "prots" (dropped: --validation=warn)',
    ]);
    expect(snapshot.serviceImports.map((s) => s.spec?.type)).toEqual(['Headless']);
    expect(await registry.getSingleMetricAsString('clusterset_gateway_invalid_objects')).toMatch(/ 0$/m);
  });

  it('a Service kube-apiserver would refuse (port out of range, unknown protocol) is not loaded; the valid one is', async () => {
    const { problems, snapshot } = await load({
      'services.yaml': [
        'apiVersion: v1',
        'kind: Service',
        'metadata: {name: good, namespace: shop}',
        'spec:',
        '  ports: [{port: 80}]',
        '---',
        'apiVersion: v1',
        'kind: Service',
        'metadata: {name: bad, namespace: shop}',
        'spec:',
        '  ports:',
        '  - name: web',
        '    port: 99999',
        '    protocol: HTTP',
        '',
      ].join('\n'),
    });
    expect(problems).toEqual([
      'services.yaml:13: Service shop/bad (not loaded): spec.ports[0].port: Invalid value: 99999: must be between 1 and 65535, inclusive',
      'services.yaml:14: Service shop/bad (not loaded): spec.ports[0].protocol: Unsupported value: "HTTP": supported values: "TCP", "UDP", "SCTP"',
    ]);
    expect(snapshot.services.map((s) => s.metadata.name)).toEqual(['good']);
  });

  it('EndpointSlice addresses kube-apiserver refuses are refused; loopback ones are served (backends on this machine)', async () => {
    const slice = (name: string, address: string) =>
      [
        'apiVersion: discovery.k8s.io/v1',
        'kind: EndpointSlice',
        `metadata: {name: ${name}, namespace: shop, labels: {kubernetes.io/service-name: web}}`,
        'addressType: IPv4',
        'ports: [{name: http, port: 8080}]',
        'endpoints:',
        `- addresses: ["${address}"]`,
        '',
      ].join('\n');
    const { problems, snapshot } = await load({
      'slices.yaml': [
        slice('local', '127.0.0.1'),
        slice('typo', '10.0.0.300'),
        slice('link', '169.254.1.1'),
      ].join('---\n'),
    });
    expect(problems).toEqual([
      'slices.yaml:15: EndpointSlice shop/typo (not loaded): endpoints[0].addresses[0]: Invalid value: "10.0.0.300": must be a valid IPv4 address',
      'slices.yaml:23: EndpointSlice shop/link (not loaded): endpoints[0].addresses[0]: Invalid value: "169.254.1.1": may not be in the link-local range (169.254.0.0/16, fe80::/10)',
    ]);
    expect(snapshot.slicesForService('shop', 'web').map((s) => s.metadata.name)).toEqual(['local']);
  });

  it('a kubernetes.io/tls Secret without its key is refused, and its data is never shown', async () => {
    const { problems, snapshot } = await load({
      'tls.yaml': [
        'apiVersion: v1',
        'kind: Secret',
        'metadata: {name: cert, namespace: shop}',
        'type: kubernetes.io/tls',
        'stringData:',
        '  tls.crt: TOPSECRET-CERTIFICATE',
        '',
      ].join('\n'),
    });
    expect(problems).toEqual(['tls.yaml:1: Secret shop/cert (not loaded): data[tls.key]: Required value']);
    expect(problems.join('\n')).not.toContain('TOPSECRET');
    expect(snapshot.byKey('Secret').size).toBe(0);
  });
});
