import { describe, expect, it } from 'vitest';
import { type CrdEntry, describeCrd } from '../../src/validation/crd-entry.ts';
import type { CrdDocument, JsonSchema } from '../../src/validation/index.ts';
import { CrdValidator, invalidMessage } from '../../src/validation/index.ts';
import { base, causes, object, validator } from './fixtures.ts';

type Json = Record<string, unknown>;

const gatewayClass = (spec: Json) =>
  ({
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'GatewayClass',
    metadata: { name: 'gc' },
    spec,
  }) as Json;

describe('OpenAPI schema checks on the shipped CRDs', () => {
  it('types: a string where a list belongs stops CEL, as kube-apiserver does', () => {
    const route = base.httpRoute({ backendRefs: 'x' });
    expect(causes(route)).toEqual([
      'spec.rules[0].backendRefs: Invalid value: "string": spec.rules[0].backendRefs in body must be of type array: "string"',
      '<nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
    ]);
    const result = validator.validate(route);
    expect(invalidMessage(route, result.errors)).toBe(
      'HTTPRoute.gateway.networking.k8s.io "x" is invalid: [spec.rules[0].backendRefs: Invalid value: "string": spec.rules[0].backendRefs in body must be of type array: "string", <nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]',
    );
  });

  it('types: integers are integers', () => {
    expect(causes(base.httpRoute({ backendRefs: [{ name: 'svc', port: '80' }] }))).toContain(
      'spec.rules[0].backendRefs[0].port: Invalid value: "string": spec.rules[0].backendRefs[0].port in body must be of type integer: "string"',
    );
    expect(causes(base.httpRoute({ backendRefs: [{ name: 'svc', port: 80.5 }] }))[0]).toBe(
      'spec.rules[0].backendRefs[0].port: Invalid value: "number": spec.rules[0].backendRefs[0].port in body must be of type integer: "number"',
    );
  });

  it('enums', () => {
    expect(causes(base.httpRoute({ matches: [{ method: 'FETCH' }] }))[0]).toBe(
      'spec.rules[0].matches[0].method: Unsupported value: "FETCH": supported values: "GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH"',
    );
  });

  it('patterns', () => {
    const route = base.httpRoute();
    (route.spec as Json).hostnames = ['Bad_Host'];
    expect(causes(route)).toEqual([
      `spec.hostnames[0]: Invalid value: "Bad_Host": spec.hostnames[0] in body should match '^(\\*\\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'`,
    ]);
  });

  it('lengths: the GatewayClass description is at most 64 characters', () => {
    const ok = gatewayClass({ controllerName: 'example.com/gw', description: 'x'.repeat(64) });
    const long = gatewayClass({ controllerName: 'example.com/gw', description: 'x'.repeat(65) });
    expect(causes(ok)).toEqual([]);
    expect(causes(long)).toEqual(['spec.description: Too long: may not be more than 64 bytes']);
    expect(causes(gatewayClass({ controllerName: '' }))).toContain(
      'spec.controllerName: Invalid value: "": spec.controllerName in body should be at least 1 chars long',
    );
  });

  it('bounds and item counts', () => {
    expect(causes(base.httpRoute({ backendRefs: [{ name: 'svc', port: 70000 }] }))).toEqual([
      'spec.rules[0].backendRefs[0].port: Invalid value: 70000: spec.rules[0].backendRefs[0].port in body should be less than or equal to 65535',
    ]);
    const route = base.httpRoute();
    (route.spec as Json).hostnames = Array.from({ length: 17 }, (_, i) => `h${i}.example.com`);
    expect(causes(route)).toEqual(['spec.hostnames: Too many: 17: must have at most 16 items']);
  });

  it('required fields', () => {
    expect(causes(object('Gateway', { listeners: [{ name: 'a', port: 80, protocol: 'HTTP' }] }))).toEqual([
      'spec.gatewayClassName: Required value',
    ]);
  });

  it('list-type map: keys unique (and the CEL rule on the same list also fires)', () => {
    const g = base.gateway();
    (g.spec as Json).listeners = [
      { name: 'a', port: 80, protocol: 'HTTP' },
      { name: 'a', port: 81, protocol: 'HTTP' },
    ];
    expect(causes(g)).toEqual([
      'spec.listeners[1]: Duplicate value: map[string]interface {}{"name":"a"}',
      'spec.listeners: Invalid value: "array": Listener name must be unique within the Gateway',
    ]);
  });

  it('list-type set: items unique', () => {
    const route = base.httpRoute({
      filters: [{ type: 'RequestHeaderModifier', requestHeaderModifier: { remove: ['x-a', 'x-b', 'x-a'] } }],
    });
    expect(causes(route)).toEqual([
      'spec.rules[0].filters[0].requestHeaderModifier.remove[2]: Duplicate value: "x-a"',
    ]);
  });

  it('defaults are applied as the API server applies them, nested ones included', () => {
    const result = validator.validate(
      base.httpRoute({ matches: [{ headers: [{ name: 'x', value: 'y' }] }] }),
    );
    expect(result.errors).toEqual([]);
    const spec = result.object.spec as Json;
    expect(spec.parentRefs).toEqual([{ name: 'gw', group: 'gateway.networking.k8s.io', kind: 'Gateway' }]);
    const rule = (spec.rules as Json[])[0] as Json;
    expect(rule.backendRefs).toEqual([{ name: 'svc', port: 80, group: '', kind: 'Service', weight: 1 }]);
    expect((rule.matches as Json[])[0]).toEqual({
      headers: [{ name: 'x', value: 'y', type: 'Exact' }],
      path: { type: 'PathPrefix', value: '/' },
    });
  });

  it('an omitted rules list gets its default rule', () => {
    const route = object('HTTPRoute', { parentRefs: [{ name: 'gw' }] });
    const spec = validator.validate(route).object.spec as Json;
    expect(spec.rules).toEqual([{ matches: [{ path: { type: 'PathPrefix', value: '/' } }] }]);
  });

  it('unknown fields are pruned and reported as warnings; the input is not modified', () => {
    const route = base.httpRoute({ backendRef: { name: 'typo' } });
    const result = validator.validate(route);
    expect(result.errors).toEqual([]);
    expect(result.warnings).toEqual(['unknown field "spec.rules[0].backendRef"']);
    expect(((result.object.spec as Json).rules as Json[])[0]).not.toHaveProperty('backendRef');
    expect(((route.spec as Json).rules as Json[])[0]).toHaveProperty('backendRef');
  });

  it('a Gateway address must be an IP when its type is IPAddress (oneOf, format)', () => {
    const g = base.gateway();
    (g.spec as Json).addresses = [{ type: 'IPAddress', value: 'not-an-ip' }];
    expect(causes(g)).toContain(
      'spec.addresses[0].value: Invalid value: "not-an-ip": spec.addresses[0].value in body must be of type ipv4: "not-an-ip"',
    );
  });

  it('ReferenceGrant: kinds, groups and at least one entry', () => {
    expect(causes(base.referenceGrant())).toEqual([]);
    expect(causes(base.referenceGrant({ from: [] }))).toEqual([
      'spec.from: Invalid value: 0: spec.from in body should have at least 1 items',
    ]);
    expect(causes(base.referenceGrant({ to: [{ group: '', kind: 'not a kind' }] }))).toEqual([
      `spec.to[0].kind: Invalid value: "not a kind": spec.to[0].kind in body should match '^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$'`,
    ]);
  });

  it('an object violating several rules gets every cause', () => {
    const route = base.httpRoute({
      matches: [{ path: { type: 'PathPrefix', value: 'a//b' } }],
      backendRefs: [{ name: 'svc' }],
    });
    expect(causes(route)).toEqual([
      `spec.rules[0].matches[0].path: Invalid value: "object": value must be an absolute path and start with '/' when type one of ['Exact', 'PathPrefix']`,
      `spec.rules[0].matches[0].path: Invalid value: "object": must not contain '//' when type one of ['Exact', 'PathPrefix']`,
      'spec.rules[0].backendRefs[0]: Invalid value: "object": Must have port for Service reference',
    ]);
  });
});

describe('transition rules (oldSelf) and ratcheting', () => {
  const old = gatewayClass({ controllerName: 'example.com/a' });
  it('oldSelf rules run on updates only', () => {
    expect(causes(gatewayClass({ controllerName: 'example.com/b' }))).toEqual([]);
    expect(causes(gatewayClass({ controllerName: 'example.com/b' }), old)).toEqual([
      'spec.controllerName: Invalid value: "string": Value is immutable',
    ]);
    expect(causes(gatewayClass({ controllerName: 'example.com/a', description: 'd' }), old)).toEqual([]);
  });

  it('an unchanged invalid value is not re-validated on update (ratcheting); a changed one is', () => {
    const bad = base.httpRoute({ backendRefs: [{ name: 'svc' }] });
    expect(causes(bad)).toHaveLength(1);
    expect(causes(bad, bad)).toEqual([]);
    expect(causes(base.httpRoute({ backendRefs: [{ name: 'other' }] }), bad)).toHaveLength(1);
  });
});

describe('unknown kinds and versions', () => {
  it('names the kind and version', () => {
    const v2 = { ...base.httpRoute(), apiVersion: 'gateway.networking.k8s.io/v2' };
    expect(causes(v2)).toContain(
      'apiVersion: Invalid value: "gateway.networking.k8s.io/v2": no matches for kind "HTTPRoute" in version "gateway.networking.k8s.io/v2" (HTTPRoute is served as apiVersion gateway.networking.k8s.io/v1, gateway.networking.k8s.io/v1beta1)',
    );
    const unknown = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } };
    expect(causes(unknown)).toContain(
      'kind: Invalid value: "Widget": no matches for kind "Widget" in version "example.com/v1" (no CustomResourceDefinition here serves the group "example.com")',
    );
  });

  it('built-in kinds are not custom resources and pass unchanged', () => {
    const svc = {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 's' },
      spec: { ports: [{ port: 80 }] },
    };
    expect(validator.validate(svc)).toEqual({ object: svc, errors: [], unknownFields: [], warnings: [] });
  });
});

function crd(schema: JsonSchema): CrdDocument {
  return {
    spec: {
      group: 'example.com',
      names: { kind: 'Widget', plural: 'widgets' },
      scope: 'Namespaced',
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: schema } }],
    },
  };
}
const widget = (spec: Json) => ({
  apiVersion: 'example.com/v1',
  kind: 'Widget',
  metadata: { name: 'w' },
  spec,
});

describe('rule features the shipped CRDs do not use', () => {
  const v = new CrdValidator(
    [
      crd({
        type: 'object',
        properties: {
          spec: {
            type: 'object',
            properties: {
              min: { type: 'integer' },
              max: { type: 'integer' },
              port: { 'x-kubernetes-int-or-string': true },
              extra: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
              tags: { type: 'array', items: { type: 'string' } },
              labels: { type: 'object', additionalProperties: { type: 'string' } },
            },
            'x-kubernetes-validations': [
              {
                rule: 'self.min <= self.max',
                messageExpression: "'min ' + string(self.min) + ' is above max ' + string(self.max)",
                fieldPath: '.min',
              },
              {
                rule: '!has(self.extra) || !has(self.extra.forbidden)',
                message: 'forbidden is forbidden',
                reason: 'FieldValueForbidden',
              },
              {
                rule: '!has(self.tags) || self.tags.isSorted()',
                message: 'tags must be sorted',
                reason: 'FieldValueRequired',
              },
              {
                rule: '!has(self.port) || type(self.port) == string || self.port > 0',
                message: 'port must be positive',
              },
              {
                rule: '!has(self.labels) || self.labels.all(k, k.lowerAscii() == k)',
                message: 'label keys are lowercase',
              },
            ],
          },
        },
      }),
    ],
    { strict: true },
  );
  const errs = (spec: Json) =>
    v.validate(widget(spec)).errors.map((e) => `${e.reason} ${e.field}: ${e.message}`);

  it('messageExpression and fieldPath', () => {
    expect(errs({ min: 1, max: 2 })).toEqual([]);
    expect(errs({ min: 3, max: 2 })).toEqual([
      'FieldValueInvalid spec.min: Invalid value: "object": min 3 is above max 2',
    ]);
  });
  it('reason picks the error type', () => {
    expect(errs({ min: 1, max: 1, extra: { forbidden: true, anything: [1, 2] } })).toEqual([
      'FieldValueForbidden spec: Forbidden: forbidden is forbidden',
    ]);
    expect(errs({ min: 1, max: 1, tags: ['b', 'a'] })).toEqual([
      'FieldValueRequired spec: Required value: tags must be sorted',
    ]);
  });
  it('int-or-string takes both and nothing else', () => {
    expect(errs({ min: 1, max: 1, port: 'http' })).toEqual([]);
    expect(errs({ min: 1, max: 1, port: 8080 })).toEqual([]);
    expect(errs({ min: 1, max: 1, port: -1 })).toEqual([
      'FieldValueInvalid spec: Invalid value: "object": port must be positive',
    ]);
    expect(errs({ min: 1, max: 1, port: true })[0]).toBe(
      'FieldValueTypeInvalid spec.port: Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean"',
    );
  });
  it('preserve-unknown-fields keeps what it holds; map values are typed', () => {
    const result = v.validate(widget({ min: 1, max: 1, extra: { a: { b: 1 } }, other: 1 }));
    expect(result.object.spec).toEqual({ min: 1, max: 1, extra: { a: { b: 1 } } });
    expect(errs({ min: 1, max: 1, labels: { Upper: 'x' } })).toEqual([
      'FieldValueInvalid spec: Invalid value: "object": label keys are lowercase',
    ]);
    expect(errs({ min: 1, max: 1, labels: { a: 1 } })[0]).toBe(
      'FieldValueTypeInvalid spec.labels[a]: Invalid value: "number": spec.labels[a] in body must be of type string: "number"',
    );
  });
  it('a runtime error names the rule', () => {
    expect(errs({ max: 1 })).toEqual([
      'FieldValueInvalid spec.min: Invalid value: "object": no such key: min evaluating rule: self.min <= self.max',
    ]);
  });
});

describe('rules that cannot be evaluated', () => {
  const bad = crd({
    type: 'object',
    properties: {
      spec: { type: 'object', 'x-kubernetes-validations': [{ rule: 'self.noSuchFunction()', message: 'm' }] },
    },
  });
  it('are a startup error in strict mode', () => {
    expect(() => new CrdValidator([bad], { strict: true })).toThrow(
      /Widget\.example\.com\/v1\.spec: .*noSuchFunction.*: self\.noSuchFunction\(\)/,
    );
  });
  it('otherwise reject the object with a message naming the field and the rule', () => {
    const v = new CrdValidator([bad]);
    expect(v.ruleProblems).toHaveLength(1);
    const [error] = v.validate(widget({})).errors;
    expect(error?.field).toBe('spec');
    expect(error?.message).toMatch(
      /^Invalid value: "object": rule is not supported: .*: self\.noSuchFunction\(\)$/,
    );
  });
});

describe('kinds compiled on first use', () => {
  const schema: JsonSchema = {
    type: 'object',
    properties: {
      spec: { type: 'object', 'x-kubernetes-validations': [{ rule: 'self.noSuchFunction()', message: 'm' }] },
    },
  };
  const entryOf = (document: CrdDocument, loads: { count: number }): CrdEntry => ({
    ...describeCrd(document),
    load: () => {
      loads.count++;
      return document;
    },
  });

  it('read a CRD only when an object of its kind comes, once, and report its rules then', () => {
    const loads = { count: 0 };
    const reported: string[] = [];
    const v = new CrdValidator([entryOf(crd(schema), loads)], {
      onRuleProblems: (problems) => reported.push(...problems.map((p) => p.rule)),
    });
    expect(loads.count).toBe(0);
    expect(v.has('example.com/v1', 'Widget')).toBe(true);
    expect(v.validate(widget({})).errors[0]?.message).toMatch(/rule is not supported/);
    v.validate(widget({}));
    expect(loads.count).toBe(1);
    expect(reported).toEqual(['self.noSuchFunction()']);
  });

  it('cost only that object when the CRD cannot be read', () => {
    const entry: CrdEntry = {
      ...describeCrd(crd(schema)),
      load: () => {
        throw new Error('deploy/crds/widgets.yaml: ENOENT');
      },
    };
    const [error] = new CrdValidator([entry]).validate(widget({})).errors;
    expect(error?.field).toBe('kind');
    expect(error?.message).toMatch(/CustomResourceDefinition cannot be read: .*ENOENT/);
  });
});
