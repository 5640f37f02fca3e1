import { describe, expect, it } from 'vitest';
import {
  DEFAULT_CONTROLLER_NAME,
  DEFAULT_SERVICE_IMPORT_KINDS,
  type TranslateOptions,
} from '../../src/gateway/options.ts';
import { translate } from '../../src/gateway/translate.ts';
import type { AnyResource } from '../../src/snapshot/resources.ts';
import { Snapshot } from '../../src/snapshot/snapshot.ts';

const options = (eastWest: boolean): TranslateOptions => ({
  controllerName: DEFAULT_CONTROLLER_NAME,
  identity: { cluster: 'east' },
  serviceImportKinds: DEFAULT_SERVICE_IMPORT_KINDS,
  gatewayAddresses: ['192.0.2.10'],
  eastWest,
});

const objects = [
  {
    apiVersion: 'multicluster.x-k8s.io/v1alpha1',
    kind: 'ServiceImport',
    metadata: { name: 'web', namespace: 'demo' },
    spec: { type: 'ClusterSetIP', ports: [{ port: 80 }] },
  },
  {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: { name: 'web', namespace: 'demo' },
    spec: {
      parentRefs: [{ group: 'multicluster.x-k8s.io', kind: 'ServiceImport', name: 'web' }],
      rules: [
        { backendRefs: [{ group: 'multicluster.x-k8s.io', kind: 'ServiceImport', name: 'web', port: 80 }] },
      ],
    },
  },
] as unknown as AnyResource[];

describe('east-west translation switch', () => {
  it('leaves mesh routes and clusterset names alone when east-west is off', () => {
    const result = translate(new Snapshot(objects), options(false));
    expect(result.table.clusterset).toBeUndefined();
    expect(result.statuses.filter((s) => s.kind === 'HTTPRoute')).toEqual([]);
  });

  it('serves web.demo.svc.clusterset.local and reports the mesh parent when it is on', () => {
    const result = translate(new Snapshot(objects), options(true));
    expect(
      result.table.clusterset?.ports.flatMap((p) => p.listeners.map((l) => `${l.hostname}:${p.port}`)),
    ).toEqual(['web.demo.svc.clusterset.local:80']);
    const route = result.statuses.find((s) => s.kind === 'HTTPRoute');
    expect(route?.status).toMatchObject({
      parents: [
        {
          parentRef: { group: 'multicluster.x-k8s.io', kind: 'ServiceImport', name: 'web' },
          controllerName: DEFAULT_CONTROLLER_NAME,
          conditions: [
            { type: 'Accepted', status: 'True' },
            { type: 'ResolvedRefs', status: 'True' },
          ],
        },
      ],
    });
  });
});
