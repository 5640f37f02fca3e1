import { describe, expect, it } from 'vitest';
import { buildConfigDump } from '../../src/admin/config-dump.ts';
import type { RouteTable } from '../../src/ir/route-table.ts';
import { goldenInput, translateYaml } from './translation.ts';

const route = (rules: string) => `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: gw, namespace: infra }
spec:
  gatewayClassName: clusterset
  listeners:
    - { name: http, port: 80, protocol: HTTP }
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: hostile, namespace: infra }
spec:
  parentRefs: [{ name: gw }]
  rules:
${rules}
    - matches: [{ path: { type: PathPrefix, value: /good } }]
      backendRefs: [{ name: echo-v1, port: 8080 }]
`;

function routeMessages(result: ReturnType<typeof translateYaml>): string {
  const update = result.statuses.find((s) => JSON.stringify(s).includes('"hostile"'));
  return JSON.stringify(update?.status ?? {});
}

function routePaths(table: RouteTable): string[] {
  return table.ports.flatMap((p) =>
    p.listeners.flatMap((l) =>
      l.virtualHosts.flatMap((v) =>
        v.routes.filter((r) => r.route === 'infra/hostile').map((r) => r.match.path.value),
      ),
    ),
  );
}

describe('translation refuses hostile configuration with a condition', () => {
  it.each([
    ['a lookahead', '/(?=admin).*'],
    ['a backreference', '/(a)\\\\1'],
    ['an unbalanced group', '/(a'],
  ])('rejects a path regex RE2 cannot compile (%s), keeps the good rule', (_what, regex) => {
    const result = translateYaml(
      route(`    - matches: [{ path: { type: RegularExpression, value: "${regex}" } }]
      backendRefs: [{ name: echo-v1, port: 8080 }]`),
    );
    expect(routeMessages(result)).toContain('is not a valid RE2 regular expression');
    expect(routePaths(result.table)).toEqual(['/good']);
  });

  it('accepts a regex RE2 runs in linear time, however it would backtrack elsewhere', () => {
    const result = translateYaml(
      route(`    - matches: [{ path: { type: RegularExpression, value: "/(a+)+" } }]
      backendRefs: [{ name: echo-v1, port: 8080 }]`),
    );
    expect(routePaths(result.table)).toEqual(['/(a+)+', '/good']);
  });

  it.each([
    ['CRLF in a set value', 'set: [{ name: X-A, value: "a\\r\\nx-injected: 1" }]', 'value of X-A'],
    ['NUL in an add value', 'add: [{ name: X-A, value: "a\\u0000b" }]', 'value of X-A'],
    ['a space in a header name', 'set: [{ name: "X A", value: b }]', 'is not a valid HTTP header name'],
    ['a colon in a removed name', 'remove: ["x:a"]', 'is not a valid HTTP header name'],
  ])('rejects a header modifier with %s', (_what, ops, message) => {
    for (const type of ['RequestHeaderModifier', 'ResponseHeaderModifier']) {
      const field = type === 'RequestHeaderModifier' ? 'requestHeaderModifier' : 'responseHeaderModifier';
      const result = translateYaml(
        route(`    - matches: [{ path: { type: PathPrefix, value: /bad } }]
      filters: [{ type: ${type}, ${field}: { ${ops} } }]
      backendRefs: [{ name: echo-v1, port: 8080 }]`),
      );
      expect(routeMessages(result)).toContain(message);
      expect(routePaths(result.table)).toEqual(['/good']);
    }
  });
});

describe('/config_dump', () => {
  it('redacts every Secret-derived value: no private key or certificate, only its size', () => {
    const result = translateYaml(goldenInput('https-listener'));
    const raw = JSON.stringify(result.table);
    expect(raw).toContain('PRIVATE KEY');
    const dump = JSON.stringify(buildConfigDump({ result, balancers: {}, problems: [] }));
    expect(dump).not.toContain('PRIVATE KEY');
    expect(dump).not.toContain('BEGIN CERTIFICATE');
    expect(dump).toMatch(/"keyPem":"<redacted, \d+ bytes>"/);
    expect(dump).toMatch(/"certPem":"<redacted, \d+ bytes>"/);
    // Everything else is still there.
    expect(dump).toContain('"secret"');
  });
});
