import { describe, expect, it } from 'vitest';
import {
  DEFAULT_CONTROLLER_NAME,
  DEFAULT_SERVICE_IMPORT_KINDS,
  type TranslateOptions,
} from '../../src/gateway/options.ts';
import { translate } from '../../src/gateway/translate.ts';
import type { AnyResource } from '../../src/snapshot/resources.ts';
import { Snapshot } from '../../src/snapshot/snapshot.ts';

/**
 * Bad mesh input costs only the object at fault: translation never throws, the bad parent gets a condition,
 * and every other Service stays served.
 */
const options: TranslateOptions = {
  controllerName: DEFAULT_CONTROLLER_NAME,
  identity: { cluster: 'east' },
  serviceImportKinds: DEFAULT_SERVICE_IMPORT_KINDS,
  gatewayAddresses: ['192.0.2.10'],
  eastWest: true,
};

const good = {
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'good', namespace: 'shop', creationTimestamp: '2026-01-01T00:00:00Z' },
  spec: { clusterIP: '10.96.0.1', ports: [{ port: 80 }] },
};

const svc = (name: string, spec: unknown) => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, namespace: 'shop' },
  ...(spec === undefined ? {} : { spec }),
});

const meshRoute = (
  kind: 'HTTPRoute' | 'GRPCRoute',
  name: string,
  parent: Record<string, unknown>,
  rules: unknown,
) => ({
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind,
  metadata: { name, namespace: 'shop' },
  spec: { parentRefs: [{ group: '', kind: 'Service', ...parent }], rules },
});

const CASES: [string, unknown[], string | undefined][] = [
  ['a Service without spec', [svc('bare', undefined)], undefined],
  ['a Service without ports', [svc('portless', { ports: [] })], undefined],
  ['the same port twice', [svc('twice', { ports: [{ port: 80 }, { port: 80, name: 'again' }] })], undefined],
  [
    'two Services on one ClusterIP',
    [svc('copycat', { clusterIP: '10.96.0.1', ports: [{ port: 80 }] })],
    undefined,
  ],
  [
    'a route on an ExternalName Service',
    [
      svc('ext', { type: 'ExternalName', externalName: 'example.com', ports: [{ port: 80 }] }),
      meshRoute('HTTPRoute', 'r', { name: 'ext' }, [{ backendRefs: [{ name: 'good', port: 80 }] }]),
    ],
    'UnsupportedValue',
  ],
  [
    'a route on a port the Service lacks',
    [
      meshRoute('HTTPRoute', 'r', { name: 'good', port: 81 }, [
        { backendRefs: [{ name: 'good', port: 80 }] },
      ]),
    ],
    'NoMatchingParent',
  ],
  [
    'a route on a port name the Service lacks',
    [meshRoute('HTTPRoute', 'r', { name: 'good', sectionName: 'nope' }, [])],
    'NoMatchingParent',
  ],
  [
    'a GRPCRoute on a missing Service',
    [meshRoute('GRPCRoute', 'r', { name: 'missing' }, [{ backendRefs: [{ name: 'good', port: 80 }] }])],
    'NoMatchingParent',
  ],
  [
    'a GRPCRoute whose only rule is invalid',
    [
      meshRoute('GRPCRoute', 'r', { name: 'good' }, [
        {
          filters: [{ type: 'RequestRedirect', requestRedirect: {} }],
          backendRefs: [{ name: 'good', port: 80 }],
        },
      ]),
    ],
    undefined,
  ],
];

describe('hostile mesh input', () => {
  it.each(CASES)('%s costs only that object', (_name, objects, reason) => {
    const result = translate(new Snapshot([good, ...objects] as AnyResource[]), options);
    expect(result.problems ?? []).toEqual([]);
    const served = (result.table.clusterset?.ports ?? []).flatMap((p) =>
      p.listeners.map((l) => `${l.hostname}:${p.port}`),
    );
    expect(served).toContain('good.shop.svc.cluster.local:80');
    expect(result.table.clusterset?.addresses?.find((a) => a.address === '10.96.0.1')?.hostname).toBe(
      'good.shop.svc.cluster.local',
    );
    if (reason !== undefined) {
      const route = result.statuses.find((s) => s.name === 'r' && 'parents' in s.status);
      expect(route).toBeDefined();
      const { parents } = route!.status as unknown as {
        parents: { conditions: { type: string; reason: string }[] }[];
      };
      expect(parents[0]?.conditions.find((c) => c.type === 'Accepted')?.reason).toBe(reason);
    }
  });
});
