import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CONTROLLER_PERMISSIONS, createStatusWriter, startLeaderElection } from '../../src/kube/index.ts';
import { createKubeSource, loadKubeConfig } from '../../src/sources/kube/index.ts';
import type { KubeApiServer } from '../support/kube-api-server/index.ts';
import {
  CONTROLLER,
  captureLogs,
  eventually,
  gateway,
  gatewayClass,
  httpRoute,
  SnapshotRecorder,
  withServer,
} from './helpers.ts';

let server: KubeApiServer | undefined;

afterEach(async () => {
  await server?.stop();
  server = undefined;
});

describe('controller permissions and configuration', () => {
  it('uses only the API permissions CONTROLLER_PERMISSIONS declares (what deploy/ RBAC must grant)', async () => {
    server = await withServer();
    server.create(gatewayClass());
    server.create(gateway());
    server.create(httpRoute('web'));
    const dir = mkdtempSync(join(tmpdir(), 'kubeconfig-'));
    const { kubeConfig, origin, namespace } = loadKubeConfig(server.writeKubeconfig(join(dir, 'config')));
    expect({ origin, namespace }).toEqual({ origin: 'kubeconfig', namespace: 'default' });
    const logger = captureLogs().logger;
    const source = createKubeSource({ kubeConfig, logger, debounceMs: 10 });
    const recorder = new SnapshotRecorder();
    await source.start(recorder.onSnapshot);
    await recorder.waitFor(() => true, 'snapshot');
    const elector = startLeaderElection({
      kubeConfig,
      namespace: 'default',
      name: 'gw',
      identity: 'a',
      leaseDurationMs: 1000,
      renewMs: 50,
      logger,
    });
    await eventually(() => elector.isLeader, 'leader');
    const writer = createStatusWriter({
      kubeConfig,
      controllerName: CONTROLLER,
      logger,
      isLeader: () => elector.isLeader,
    });
    await writer.write([
      {
        kind: 'HTTPRoute',
        namespace: 'default',
        name: 'web',
        generation: 1,
        status: {
          parents: [
            {
              parentRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gw' },
              controllerName: CONTROLLER,
              conditions: [
                { type: 'Accepted', status: 'False', reason: 'NotAllowedByListeners', message: 'x' },
              ],
            },
          ],
        },
      },
    ]);
    await elector.stop();
    await source.stop();

    const used = new Set(
      server.requests.map(
        (r) => `${r.group}|${r.subresource ? `${r.resource}/${r.subresource}` : r.resource}|${r.verb}`,
      ),
    );
    const allowed = (group: string, resource: string, verb: string): boolean =>
      CONTROLLER_PERMISSIONS.some(
        (p) => p.apiGroup === group && p.resources.includes(resource) && p.verbs.includes(verb),
      );
    const denied = [...used].filter((u) => {
      const [group, resource, verb] = u.split('|') as [string, string, string];
      return !allowed(group, resource, verb);
    });
    expect(denied).toEqual([]);
    // Every kind of access happened, so the check above covered them.
    expect(used).toContain('gateway.networking.k8s.io|httproutes/status|patch');
    expect(used).toContain('coordination.k8s.io|leases|update');
    expect(used).toContain('|events|create');
    expect(used).toContain('discovery.k8s.io|endpointslices|watch');
  });

  it('rejects a kubeconfig without a cluster with a stable error code', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kubeconfig-'));
    const path = join(dir, 'config');
    writeFileSync(path, 'apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n');
    expect(() => loadKubeConfig(path)).toThrow(
      expect.objectContaining({ name: 'SourceError', code: 'KUBECONFIG_NO_CLUSTER' }),
    );
  });
});
