import { describe, expect, it } from 'vitest';
import {
  DEFAULT_CONTROLLER_NAME,
  DEFAULT_SERVICE_IMPORT_KINDS,
  type TranslateOptions,
} from '../../src/gateway/options.ts';
import { translate } from '../../src/gateway/translate.ts';
import type { AnyResource } from '../../src/snapshot/resources.ts';
import { Snapshot } from '../../src/snapshot/snapshot.ts';

const OPTIONS: TranslateOptions = {
  controllerName: DEFAULT_CONTROLLER_NAME,
  identity: { cluster: 'east', zone: 'zone-a' },
  serviceImportKinds: DEFAULT_SERVICE_IMPORT_KINDS,
  gatewayAddresses: ['192.0.2.10'],
  eastWest: false,
};

const GW = 'gateway.networking.k8s.io/v1';
const objects = (extra: unknown[]): AnyResource[] =>
  [
    {
      apiVersion: GW,
      kind: 'GatewayClass',
      metadata: { name: 'gc' },
      spec: { controllerName: DEFAULT_CONTROLLER_NAME },
    },
    {
      apiVersion: GW,
      kind: 'Gateway',
      metadata: { name: 'gw', namespace: 'ns' },
      spec: { gatewayClassName: 'gc', listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }] },
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'svc', namespace: 'ns' },
      spec: { ports: [{ port: 80 }] },
    },
    route('good', '/good', [{ name: 'svc', port: 80 }]),
    ...extra,
  ] as AnyResource[];

function route(name: string, path: string, backendRefs: unknown): unknown {
  return {
    apiVersion: GW,
    kind: 'HTTPRoute',
    metadata: { name, namespace: 'ns' },
    spec: {
      parentRefs: [{ name: 'gw' }],
      rules: [{ matches: [{ path: { type: 'PathPrefix', value: path } }], backendRefs }],
    },
  };
}

/** An object whose every property read throws: the worst a source could hand translation. */
function throwingRoute(): unknown {
  const spec = new Proxy(
    {},
    {
      get(_target, key) {
        if (key === 'parentRefs') return [{ name: 'gw' }];
        throw new Error(`boom reading spec.${String(key)}`);
      },
    },
  );
  return { apiVersion: GW, kind: 'HTTPRoute', metadata: { name: 'bomb', namespace: 'ns' }, spec };
}

const paths = (result: ReturnType<typeof translate>) => JSON.stringify(result.table);

describe('translation never throws for one object', () => {
  it('a throwing route gets Accepted=False and a problem; everything else is translated', () => {
    const result = translate(
      new Snapshot(objects([throwingRoute(), route('after', '/after', [{ name: 'svc', port: 80 }])])),
      OPTIONS,
    );
    expect(paths(result)).toContain('/good');
    expect(paths(result)).toContain('/after');
    expect(result.problems).toEqual(['HTTPRoute ns/bomb: translation failed: boom reading spec.rules']);
    const bomb = result.statuses.find((s) => s.kind === 'HTTPRoute' && s.name === 'bomb');
    type Parents = { parents: { conditions: { type: string }[] }[] };
    const parents = (bomb?.status as Parents | undefined)?.parents ?? [];
    const accepted = parents[0]?.conditions.find((c) => c.type === 'Accepted');
    expect(accepted).toMatchObject({
      status: 'False',
      reason: 'UnsupportedValue',
      message: 'translation failed: boom reading spec.rules',
    });
    const gateway = result.statuses.find((s) => s.kind === 'Gateway');
    expect(JSON.stringify(gateway?.status)).toContain('"attachedRoutes":2');
  });

  it('the mistyped backendRefs: "x" that no validator caught costs only its route', () => {
    const result = translate(new Snapshot(objects([route('typo', '/typo', 'x')])), OPTIONS);
    expect(paths(result)).toContain('/good');
    expect(result.statuses.some((s) => s.name === 'good')).toBe(true);
    expect(result.statuses.some((s) => s.name === 'typo')).toBe(true);
  });

  it('a Gateway whose listeners are not a list gets Accepted=False, reason Invalid; other Gateways serve', () => {
    const broken = {
      apiVersion: GW,
      kind: 'Gateway',
      metadata: { name: 'broken', namespace: 'ns' },
      spec: { gatewayClassName: 'gc', listeners: 'x' },
    };
    const result = translate(new Snapshot(objects([broken])), OPTIONS);
    expect(paths(result)).toContain('/good');
    const status = result.statuses.find((s) => s.kind === 'Gateway' && s.name === 'broken');
    expect(JSON.stringify(status?.status)).toContain('"reason":"Invalid"');
    expect(result.problems?.[0]).toMatch(/^Gateway ns\/broken: translation failed: /);
  });
});
