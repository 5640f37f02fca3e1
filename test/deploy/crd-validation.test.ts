import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CrdDocument } from '../../src/validation/index.ts';
import { CrdValidator } from '../../src/validation/index.ts';
import { type BuiltObject, buildKustomization } from './kustomize.ts';
import { at, DEPLOY_DIR, isObject, type JsonObject, loadYamlDocuments, REPO_ROOT, str } from './manifests.ts';

/**
 * Everything deploy/ makes the API server receive is what the API server accepts: every kustomization is
 * rendered, every custom resource is validated against the CRDs that deploy/crds installs (schema and CEL,
 * as kube-apiserver does), and built-in kinds get the checks that matter: names and selectors.
 */
function kustomizations(dir: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) found.push(...kustomizations(path));
    else if (entry === 'kustomization.yaml') found.push(dir);
  }
  return found.sort();
}

const DIRS = kustomizations(DEPLOY_DIR);
/** Plain manifests applied with `kubectl apply -f` (deploy/examples). */
const EXAMPLES = readdirSync(join(DEPLOY_DIR, 'examples')).map((f) => join(DEPLOY_DIR, 'examples', f));

const installed = buildKustomization(join(DEPLOY_DIR, 'crds'))
  .map((o) => o.object)
  .filter((o) => o['kind'] === 'CustomResourceDefinition') as unknown as CrdDocument[];
const validator = new CrdValidator(installed, { strict: true });

const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const LABEL_NAMED = new Set(['Namespace', 'Service']);

function name(o: BuiltObject): string {
  return `${relative(REPO_ROOT, o.file)}:${o.line} ${String(o.object['kind'])} ${str(at(o.object, 'metadata', 'name'))}`;
}

/** The problems kube-apiserver (or the workload controllers) would have with one built-in object. */
function builtInProblems(o: JsonObject, all: readonly JsonObject[]): string[] {
  const problems: string[] = [];
  const kind = String(o['kind']);
  const objectName = str(at(o, 'metadata', 'name')) ?? '';
  const label = LABEL_NAMED.has(kind);
  const max = label ? 63 : 253;
  if (objectName.length > max || !(label ? DNS1123_LABEL : DNS1123_SUBDOMAIN).test(objectName)) {
    problems.push(`metadata.name "${objectName}" is not a DNS-1123 ${label ? 'label' : 'subdomain'}`);
  }
  const ns = str(at(o, 'metadata', 'namespace'));
  if (ns !== undefined && !DNS1123_LABEL.test(ns))
    problems.push(`metadata.namespace "${ns}" is not a DNS label`);
  if (kind === 'Deployment' || kind === 'DaemonSet' || kind === 'StatefulSet') {
    const selector = at(o, 'spec', 'selector', 'matchLabels');
    const labels = at(o, 'spec', 'template', 'metadata', 'labels');
    if (!isObject(selector) || Object.keys(selector).length === 0)
      problems.push('spec.selector: Required value');
    else if (!matches(selector, labels)) {
      problems.push(
        'spec.template.metadata.labels: Invalid value: `selector` does not match template `labels`',
      );
    }
  }
  const serviceSelector = kind === 'Service' ? at(o, 'spec', 'selector') : undefined;
  if (isObject(serviceSelector)) {
    const pods = all.filter(
      (w) =>
        ['Deployment', 'DaemonSet', 'StatefulSet'].includes(String(w['kind'])) &&
        at(w, 'metadata', 'namespace') === ns,
    );
    if (
      pods.length > 0 &&
      !pods.some((w) => matches(serviceSelector, at(w, 'spec', 'template', 'metadata', 'labels')))
    ) {
      problems.push(
        `spec.selector ${JSON.stringify(serviceSelector)} selects no pod template in namespace ${ns}`,
      );
    }
  }
  return problems;
}

function matches(selector: JsonObject, labels: unknown): boolean {
  return isObject(labels) && Object.entries(selector).every(([k, v]) => labels[k] === v);
}

/** The Services deploy/ installs: what a ServiceMonitor must select. */
const SERVICES = buildKustomization(DEPLOY_DIR)
  .map((o) => o.object)
  .filter((o) => o['kind'] === 'Service');

/**
 * Prometheus Operator kinds (deploy/monitoring): their CRDs belong to the operator, not to deploy/crds, so
 * they get the checks the operator's schema makes and that matter here: a ServiceMonitor selects one of our
 * Services by a port it has; every PrometheusRule rule has an expression and a name.
 */
function operatorProblems(o: JsonObject): string[] | undefined {
  if (!String(o['apiVersion']).startsWith('monitoring.coreos.com/')) return undefined;
  const kind = String(o['kind']);
  if (kind === 'ServiceMonitor') {
    const selector = at(o, 'spec', 'selector', 'matchLabels');
    const endpoints = at(o, 'spec', 'endpoints');
    if (!isObject(selector) || !Array.isArray(endpoints) || endpoints.length === 0)
      return ['spec.selector.matchLabels and spec.endpoints: Required value'];
    const selected = SERVICES.filter((svc) => matches(selector, at(svc, 'metadata', 'labels')));
    if (selected.length === 0)
      return [`spec.selector ${JSON.stringify(selector)} selects no Service of deploy/`];
    const ports = selected.flatMap((svc) => {
      const list = at(svc, 'spec', 'ports');
      return Array.isArray(list) ? list.map((p) => (isObject(p) ? p['name'] : undefined)) : [];
    });
    return endpoints
      .filter((e) => !isObject(e) || !ports.includes(e['port']))
      .map(
        (e) =>
          `spec.endpoints: port ${JSON.stringify(isObject(e) ? e['port'] : e)} is not a port of the selected Service`,
      );
  }
  if (kind === 'PrometheusRule') {
    const groups = at(o, 'spec', 'groups');
    if (!Array.isArray(groups) || groups.length === 0) return ['spec.groups: Required value'];
    return groups.flatMap((g, i) => {
      const rules = isObject(g) ? g['rules'] : undefined;
      if (!Array.isArray(rules) || rules.length === 0) return [`spec.groups[${i}].rules: Required value`];
      return rules.flatMap((r, j) =>
        isObject(r) &&
        typeof r['expr'] === 'string' &&
        (typeof r['alert'] === 'string' || typeof r['record'] === 'string')
          ? []
          : [`spec.groups[${i}].rules[${j}]: expr and alert (or record) are required`],
      );
    });
  }
  return [`${kind}: not a Prometheus Operator kind this check knows`];
}

function problemsOf(objects: readonly BuiltObject[]): string[] {
  const all = objects.map((o) => o.object);
  const problems: string[] = [];
  for (const o of objects) {
    const apiVersion = String(o.object['apiVersion']);
    const kind = String(o.object['kind']);
    if (validator.isBuiltIn(apiVersion)) {
      for (const p of builtInProblems(o.object, all)) problems.push(`${name(o)}: ${p}`);
      continue;
    }
    const operator = operatorProblems(o.object);
    if (operator !== undefined) {
      for (const p of operator) problems.push(`${name(o)}: ${p}`);
      continue;
    }
    for (const e of validator.validate(o.object).errors)
      problems.push(`${name(o)}: ${e.field}: ${e.message}`);
    if (!validator.has(apiVersion, kind))
      problems.push(`${name(o)}: no CRD in deploy/crds for ${apiVersion} ${kind}`);
  }
  return problems;
}

describe('deploy/ is what kube-apiserver accepts', () => {
  it('finds every kustomization', () => {
    expect(DIRS.map((d) => relative(DEPLOY_DIR, d) || '.')).toEqual([
      '.',
      'base',
      'coredns',
      'crds',
      'crds-experimental',
      'daemonset',
      'monitoring',
    ]);
  });

  it('the CRDs deploy/crds installs all compile, CEL rules included', () => {
    expect(installed.length).toBe(15);
    expect(validator.ruleProblems).toEqual([]);
  });

  it('so do the experimental channel CRDs of deploy/crds-experimental (the format library included)', () => {
    const experimental = buildKustomization(join(DEPLOY_DIR, 'crds-experimental'))
      .map((o) => o.object)
      .filter((o) => o['kind'] === 'CustomResourceDefinition') as unknown as CrdDocument[];
    expect(experimental.length).toBe(13);
    expect(new CrdValidator(experimental, { strict: true }).ruleProblems).toEqual([]);
  });

  it.each(DIRS.map((d) => [relative(REPO_ROOT, d), d]))(
    'kustomize build %s: every object is valid',
    (_n, dir) => {
      const objects = buildKustomization(dir);
      expect(objects.length).toBeGreaterThan(0);
      expect(problemsOf(objects)).toEqual([]);
    },
  );

  it.each(EXAMPLES.map((f) => [relative(REPO_ROOT, f), f]))(
    'kubectl apply -f %s: every object is valid',
    (_n, file) => {
      const objects = loadYamlDocuments(file).map((d) => ({
        file: d.file,
        line: d.line,
        object: d.value as JsonObject,
      }));
      expect(problemsOf(objects)).toEqual([]);
    },
  );

  it('would catch what it checks: a too-long GatewayClass description and a selector that selects nothing', () => {
    const objects = buildKustomization(join(DEPLOY_DIR, 'base'));
    const gc = objects.find((o) => o.object['kind'] === 'GatewayClass') as BuiltObject;
    const spec = gc.object['spec'] as JsonObject;
    const broken: BuiltObject[] = [
      { ...gc, object: { ...gc.object, spec: { ...spec, description: 'x'.repeat(65) } } },
      ...objects
        .filter((o) => o.object['kind'] === 'Service' || o.object['kind'] === 'Deployment')
        .map((o) =>
          o.object['kind'] === 'Service'
            ? {
                ...o,
                object: {
                  ...o.object,
                  spec: { ...(o.object['spec'] as JsonObject), selector: { app: 'nothing' } },
                },
              }
            : o,
        ),
    ];
    const problems = problemsOf(broken);
    expect(problems).toContain(`${name(gc)}: spec.description: Too long: may not be more than 64 bytes`);
    expect(problems.some((p) => p.includes('selects no pod template'))).toBe(true);
  });
});
