import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildKustomization } from './kustomize.ts';
import {
  at,
  DEPLOY_DIR,
  isObject,
  listYamlFiles,
  loadYamlDocuments,
  REPO_ROOT,
  str,
  where,
} from './manifests.ts';

const yamlFiles = listYamlFiles(DEPLOY_DIR);

/** Kinds that live outside any namespace; everything else must say which namespace it goes to. */
const CLUSTER_SCOPED = new Set([
  'Namespace',
  'ClusterRole',
  'ClusterRoleBinding',
  'CustomResourceDefinition',
  'GatewayClass',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionPolicyBinding',
]);

describe('every YAML file in deploy/', () => {
  it('finds the manifests', () => {
    const names = yamlFiles.map((f) => relative(DEPLOY_DIR, f));
    expect(names).toEqual(
      expect.arrayContaining([
        'kustomization.yaml',
        'base/deployment.yaml',
        'base/rbac.yaml',
        'daemonset/daemonset.yaml',
        'coredns/coredns-custom.yaml',
      ]),
    );
  });

  it.each(yamlFiles.map((f) => [relative(REPO_ROOT, f), f]))('%s parses', (_name, file) => {
    expect(loadYamlDocuments(file).length).toBeGreaterThan(0);
  });

  it.each(yamlFiles.filter((f) => !f.endsWith('kustomization.yaml')).map((f) => [relative(REPO_ROOT, f), f]))(
    '%s: each object has apiVersion, kind, metadata.name and, if namespaced, a namespace',
    (_name, file) => {
      for (const doc of loadYamlDocuments(file)) {
        const object = doc.value;
        expect(isObject(object), `${where(doc)} is not a mapping`).toBe(true);
        if (!isObject(object)) continue;
        const kind = str(object['kind']);
        expect(str(object['apiVersion']), `${where(doc)} apiVersion`).toMatch(/^([a-z0-9.-]+\/)?v[0-9a-z]+$/);
        expect(kind, `${where(doc)} kind`).toMatch(/^[A-Z][A-Za-z]+$/);
        expect(str(at(object, 'metadata', 'name')), `${where(doc)} metadata.name`).toMatch(
          /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/,
        );
        const namespace = str(at(object, 'metadata', 'namespace'));
        if (kind !== undefined && CLUSTER_SCOPED.has(kind)) {
          expect(namespace, `${where(doc)} ${kind} is cluster-scoped`).toBeUndefined();
        } else {
          expect(namespace, `${where(doc)} ${kind} needs metadata.namespace`).toBeDefined();
        }
      }
    },
  );

  it.each(yamlFiles.filter((f) => f.endsWith('kustomization.yaml')).map((f) => [relative(REPO_ROOT, f), f]))(
    '%s is a kustomize Kustomization',
    (_name, file) => {
      const [doc] = loadYamlDocuments(file);
      expect(at(doc?.value as never, 'apiVersion')).toBe('kustomize.config.k8s.io/v1beta1');
      expect(at(doc?.value as never, 'kind')).toBe('Kustomization');
    },
  );
});

describe('the YAML loader', () => {
  const dir = mkdtempSync(join(tmpdir(), 'deploy-yaml-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('names the file and line of a syntax error', () => {
    const file = join(dir, 'broken.yaml');
    writeFileSync(file, 'apiVersion: v1\nkind: ConfigMap\n---\nmetadata:\n  name: a: b\n');
    expect(() => loadYamlDocuments(file)).toThrow(/broken\.yaml:5: /);
  });

  it('reports where each document starts', () => {
    const file = join(dir, 'two.yaml');
    writeFileSync(file, 'kind: A\n---\n# comment\nkind: B\n');
    expect(loadYamlDocuments(file).map((d) => d.line)).toEqual([1, 4]);
  });
});

describe('kustomizations', () => {
  const builds = ['', 'crds', 'base', 'daemonset', 'coredns'];

  it.each(builds)('deploy/%s builds: resources exist, patches hit, no object twice', (sub) => {
    const objects = buildKustomization(join(DEPLOY_DIR, sub));
    expect(objects.length).toBeGreaterThan(0);
    const seen = new Map<string, string>();
    for (const { file, line, object } of objects) {
      const key = [
        str(object['apiVersion'])?.split('/')[0],
        object['kind'],
        at(object, 'metadata', 'namespace') ?? '',
        at(object, 'metadata', 'name'),
      ].join(' ');
      expect(seen.get(key), `${key} at ${file}:${line}`).toBeUndefined();
      seen.set(key, `${file}:${line}`);
    }
  });

  it('deploy/ installs the CRDs and the controller together', () => {
    const kinds = buildKustomization(DEPLOY_DIR).map((o) => o.object['kind']);
    for (const kind of [
      'CustomResourceDefinition',
      'Namespace',
      'ServiceAccount',
      'ClusterRole',
      'ClusterRoleBinding',
      'Role',
      'RoleBinding',
      'Deployment',
      'Service',
      'GatewayClass',
    ]) {
      expect(kinds).toContain(kind);
    }
  });

  it('every object but the CoreDNS ConfigMap goes into clusterset-gateway-system or is cluster-scoped', () => {
    for (const { file, line, object } of buildKustomization(join(DEPLOY_DIR, 'daemonset'))) {
      const namespace = at(object, 'metadata', 'namespace');
      if (namespace !== undefined) expect(namespace, `${file}:${line}`).toBe('clusterset-gateway-system');
    }
  });
});
