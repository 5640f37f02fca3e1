import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { DEFAULT_CONTROLLER_NAME, type TranslateOptions } from '../../src/gateway/options.ts';
import { translate } from '../../src/gateway/translate.ts';
import type { GatewayStatus, HTTPRouteStatus, ListenerSetStatus } from '../../src/ir/status.ts';
import type { AnyResource } from '../../src/snapshot/resources.ts';
import { Snapshot } from '../../src/snapshot/snapshot.ts';

const OPTIONS: TranslateOptions = {
  controllerName: DEFAULT_CONTROLLER_NAME,
  identity: {},
  serviceImportKinds: [],
  gatewayAddresses: ['192.0.2.10'],
  eastWest: false,
};

const BASE = `
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: { name: ours }
spec: { controllerName: ${DEFAULT_CONTROLLER_NAME} }
---
apiVersion: v1
kind: Namespace
metadata: { name: infra }
---
apiVersion: v1
kind: Namespace
metadata: { name: team, labels: { listeners: allowed } }
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: shared, namespace: infra }
spec:
  gatewayClassName: ours
  allowedListeners: { namespaces: { from: Selector, selector: { matchLabels: { listeners: allowed } } } }
  listeners:
    - { name: web, port: 80, protocol: HTTP, hostname: web.example.com }
`;

function run(extra: string) {
  const objects = parseAllDocuments(BASE + extra)
    .map((d) => d.toJS() as AnyResource | null)
    .filter((o): o is AnyResource => o !== null);
  const result = translate(new Snapshot(objects), OPTIONS);
  const status = (kind: string, ns: string, name: string) =>
    result.statuses.find((s) => s.kind === kind && s.namespace === ns && s.name === name)?.status;
  const conditions = (list: readonly { type: string; status: string; reason: string }[]) =>
    Object.fromEntries(list.map((c) => [c.type, `${c.status}/${c.reason}`]));
  return { result, status, conditions };
}

const SET = (name: string, namespace: string, listeners: string, created: string) => `
---
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: { name: ${name}, namespace: ${namespace}, creationTimestamp: "${created}" }
spec:
  parentRef: { name: shared, namespace: infra }
  listeners:
${listeners}`;

describe('ListenerSets', () => {
  it('merges an allowed set into its Gateway, serves its listeners on the same port, and routes attach to it', () => {
    const { result, status, conditions } = run(
      `${SET('a', 'team', '    - { name: api, port: 80, protocol: HTTP, hostname: api.example.com }', '2025-01-01T00:00:00Z')}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: api, namespace: team }
spec:
  parentRefs: [{ kind: ListenerSet, name: a }]
  rules: [{ backendRefs: [{ name: missing, port: 80 }] }]
`,
    );
    const set = status('ListenerSet', 'team', 'a') as ListenerSetStatus;
    expect(conditions(set.conditions)).toEqual({ Accepted: 'True/Accepted', Programmed: 'True/Programmed' });
    expect(set.listeners.map((l) => [l.name, l.attachedRoutes])).toEqual([['api', 1]]);
    expect((status('Gateway', 'infra', 'shared') as GatewayStatus).attachedListenerSets).toBe(1);
    const route = status('HTTPRoute', 'team', 'api') as HTTPRouteStatus;
    expect(route.parents[0]?.parentRef).toMatchObject({ kind: 'ListenerSet', name: 'a' });
    expect(conditions(route.parents[0]?.conditions ?? []).Accepted).toBe('True/Accepted');
    expect(result.table.ports.map((p) => [p.port, p.listeners.map((l) => l.hostname).sort()])).toEqual([
      [80, ['api.example.com', 'web.example.com']],
    ]);
  });

  it('refuses a set from a namespace allowedListeners does not admit (NotAllowed)', () => {
    const { status, conditions } = run(
      SET(
        'b',
        'infra',
        '    - { name: api, port: 80, protocol: HTTP, hostname: api.example.com }',
        '2025-01-01T00:00:00Z',
      ),
    );
    const set = status('ListenerSet', 'infra', 'b') as ListenerSetStatus;
    expect(conditions(set.conditions)).toEqual({
      Accepted: 'False/NotAllowed',
      Programmed: 'False/NotAllowed',
    });
    expect((status('Gateway', 'infra', 'shared') as GatewayStatus).attachedListenerSets).toBe(0);
  });

  it('resolves conflicts oldest first: the Gateway, then the older set; a set left with nothing is not accepted', () => {
    const { status, conditions } = run(
      SET(
        'newer',
        'team',
        '    - { name: dup, port: 80, protocol: HTTP, hostname: api.example.com }',
        '2025-02-01T00:00:00Z',
      ) +
        SET(
          'older',
          'team',
          '    - { name: dup, port: 80, protocol: HTTP, hostname: api.example.com }\n    - { name: web, port: 80, protocol: HTTP, hostname: web.example.com }',
          '2025-01-01T00:00:00Z',
        ),
    );
    const older = status('ListenerSet', 'team', 'older') as ListenerSetStatus;
    expect(conditions(older.conditions).Accepted).toBe('True/Accepted');
    expect(conditions(older.listeners[0]?.conditions ?? [])).toMatchObject({ Accepted: 'True/Accepted' });
    expect(conditions(older.listeners[1]?.conditions ?? [])).toMatchObject({
      Accepted: 'False/HostnameConflict',
      Conflicted: 'True/HostnameConflict',
    });
    const newer = status('ListenerSet', 'team', 'newer') as ListenerSetStatus;
    expect(conditions(newer.conditions)).toEqual({
      Accepted: 'False/ListenersNotValid',
      Programmed: 'False/ListenersNotValid',
    });
    const gw = status('Gateway', 'infra', 'shared') as GatewayStatus;
    expect(conditions(gw.listeners[0]?.conditions ?? []).Conflicted).toBe('False/NoConflicts');
    expect(gw.attachedListenerSets).toBe(1);
  });
});
