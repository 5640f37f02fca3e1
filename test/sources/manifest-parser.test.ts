import { describe, expect, it } from 'vitest';
import { parseManifest, parseManifestInSteps } from '../../src/sources/file/manifest-parser.ts';

describe('parseManifest', () => {
  it('reads every document of a multi-document file, as kubectl apply does', () => {
    const text = [
      'apiVersion: v1',
      'kind: Service',
      'metadata: { name: web }',
      'spec: { ports: [{ port: 80 }] }',
      '---',
      '# a comment-only document is skipped',
      '---',
      'apiVersion: gateway.networking.k8s.io/v1',
      'kind: GatewayClass',
      'metadata: { name: cls }',
      'spec: { controllerName: example.net/gw }',
    ].join('\n');
    const parsed = parseManifest('svc.yaml', text);
    expect(parsed.syntaxErrors).toEqual([]);
    expect(parsed.objects.map((o) => [o.kind, o.metadata.namespace, o.metadata.name])).toEqual([
      ['Service', 'default', 'web'],
      ['GatewayClass', undefined, 'cls'],
    ]);
  });

  it('names the file and line of a syntax error and returns no objects from that file', () => {
    const text =
      'apiVersion: v1\nkind: Service\nmetadata:\n  name: ok\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: [a\n';
    const parsed = parseManifest('broken.yaml', text);
    expect(parsed.objects).toEqual([]);
    expect(parsed.syntaxErrors).toEqual([
      {
        file: 'broken.yaml',
        line: 10,
        message: 'Flow sequence in block collection must be sufficiently indented and end with a ]',
      },
    ]);
  });

  it('a key written twice is the problem of its object only, named by path and line (the last one is read)', () => {
    const text = [
      'apiVersion: v1',
      'kind: Service',
      'metadata:',
      '  name: first',
      '  name: web',
      'spec:',
      '  ports:',
      '  - port: 80',
      '    port: 81',
      '---',
      'apiVersion: v1',
      'kind: Service',
      'kind: Secret',
    ].join('\n');
    const parsed = parseManifest('dup.yaml', text);
    expect(parsed.syntaxErrors).toEqual([]);
    expect(parsed.objects.map((o) => o.metadata.name)).toEqual(['web']);
    expect(parsed.entries[0]?.duplicates).toEqual([
      { path: 'metadata.name', line: 5 },
      { path: 'spec.ports[0].port', line: 9 },
    ]);
    expect(parsed.entries[0]?.locate?.('spec.ports[0].port')).toBe(9);
    // A field not written is placed at its nearest written ancestor.
    expect(parsed.entries[0]?.locate?.('spec.ports[0].targetPort')).toBe(8);
    expect(parsed.invalidObjects).toEqual([
      { file: 'dup.yaml', line: 11, message: 'Secret: missing metadata' },
      { file: 'dup.yaml', line: 13, message: 'kind: duplicate field "kind"' },
    ]);
  });

  it('expands `<<: *anchor` merge keys as kubectl does; a merged key written again is an override, not a duplicate', () => {
    const text = [
      'apiVersion: v1',
      'kind: Service',
      'metadata: {name: a, namespace: x}',
      'spec:',
      '  ports:',
      '  - &http {name: http, port: 80}',
      '  - <<: *http',
      '    name: grpc',
      '    port: 81',
    ].join('\n');
    const parsed = parseManifest('m.yaml', text);
    expect(parsed.objects[0]).toMatchObject({
      spec: {
        ports: [
          { name: 'http', port: 80 },
          { name: 'grpc', port: 81 },
        ],
      },
    });
    expect(parsed.entries[0]?.duplicates).toEqual([]);
  });

  it('skips an object without a name, naming its line, and keeps the others', () => {
    const text =
      'apiVersion: v1\nkind: Service\nmetadata:\n  name: a\n---\napiVersion: v1\nkind: Service\nmetadata: {}\n';
    const parsed = parseManifest('m.yaml', text);
    expect(parsed.objects.map((o) => o.metadata.name)).toEqual(['a']);
    expect(parsed.invalidObjects).toEqual([
      { file: 'm.yaml', line: 6, message: 'Service: missing metadata.name' },
    ]);
  });

  it('ignores kinds the gateway does not read, such as Deployments', () => {
    const text = 'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n';
    const parsed = parseManifest('d.yaml', text);
    expect(parsed).toMatchObject({ objects: [], syntaxErrors: [], invalidObjects: [] });
    // The file source checks that the kind exists; refused is for documents that are not objects at all.
    expect(parsed.others).toMatchObject([
      { line: 1, apiVersion: 'apps/v1', kind: 'Deployment', name: 'd', refused: undefined },
    ]);
  });

  it('expands a List and folds Secret stringData into base64 data', () => {
    const text = [
      'apiVersion: v1',
      'kind: List',
      'items:',
      '- apiVersion: v1',
      '  kind: Secret',
      '  metadata: {name: s, namespace: x}',
      '  type: kubernetes.io/tls',
      '  stringData: {tls.crt: CERT}',
    ].join('\n');
    const [secret] = parseManifest('l.yaml', text).objects;
    expect(secret).toMatchObject({
      kind: 'Secret',
      metadata: { name: 's', namespace: 'x' },
      data: { 'tls.crt': 'Q0VSVA==' },
    });
  });
});

describe('parseManifest with --service-import-kinds groups', () => {
  const text = [
    'apiVersion: example.io/v1',
    'kind: ServiceImport',
    'metadata: { name: web, namespace: apps }',
    'spec: { ports: [{ port: 80 }] }',
    '---',
    'apiVersion: gateway.networking.k8s.io/v1',
    'kind: GRPCRoute',
    'metadata: { name: echo, namespace: apps }',
    'spec: { parentRefs: [{ name: gw }] }',
    '---',
    'apiVersion: gateway.networking.k8s.io/v1',
    'kind: ListenerSet',
    'metadata: { name: team, namespace: apps }',
    'spec: { parentRef: { name: gw }, listeners: [{ name: http, port: 80, protocol: HTTP }] }',
  ].join('\n');

  it('reads a ServiceImport of a configured group, and GRPCRoutes and ListenerSets', () => {
    const parsed = parseManifest('a.yaml', text, { serviceImportGroups: ['example.io'] });
    expect(parsed.objects.map((o) => `${o.apiVersion} ${o.kind}`)).toEqual([
      'example.io/v1 ServiceImport',
      'gateway.networking.k8s.io/v1 GRPCRoute',
      'gateway.networking.k8s.io/v1 ListenerSet',
    ]);
  });

  it('ignores that ServiceImport when its group is not configured', () => {
    const parsed = parseManifest('a.yaml', text);
    expect(parsed.objects.map((o) => o.kind)).toEqual(['GRPCRoute', 'ListenerSet']);
    expect(parsed.invalidObjects).toEqual([]);
  });

  it('parses in steps, a pause possible after each document, to the same result', () => {
    const doc = (name: string) => `apiVersion: v1\nkind: Service\nmetadata: { name: ${name} }\nspec: {}\n`;
    const text = ['a', 'b', 'c'].map(doc).join('---\n');
    const steps = parseManifestInSteps('svc.yaml', text);
    let pauses = 0;
    let step = steps.next();
    while (!step.done) {
      pauses++;
      step = steps.next();
    }
    expect(pauses).toBe(3);
    const whole = parseManifest('svc.yaml', text);
    expect(step.value.objects).toEqual(whole.objects);
    expect(step.value.entries.map((e) => [e.line, e.source])).toEqual(
      whole.entries.map((e) => [e.line, e.source]),
    );
    // Each object's document as written (with the `---` that opens it): the same text is the same object.
    for (const [i, name] of ['a', 'b', 'c'].entries()) expect(whole.entries[i]?.source).toContain(doc(name));
  });
});
