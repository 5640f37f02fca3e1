import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { FleetMembership } from '../../src/fleet/fleet-membership.ts';
import type { MemberView } from '../../src/fleet/member-view.ts';
import { startKubeApiServer } from '../support/kube-api-server/index.ts';
import { makePki } from '../tls/certs.ts';
import { byName, ExecPlugin, eventually, exportWeb } from './members-fixtures.ts';

/**
 * `--member-kubeconfigs`: kubeconfig files in a folder are members; one here reaches an HTTPS API server with a
 * client certificate its exec plugin hands out (the server authenticates it by the certificate's CN).
 */
describe('fleet members from kubeconfig files', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('adds a file as a member (exec plugin with a client certificate), lists bad files, removes a deleted one', async () => {
    const pki = makePki();
    const client = pki.leaf('gateway-client', ['DNS:gateway-client']);
    const plugin = new ExecPlugin();
    plugin.set({ mode: 'cert', cert: client.cert, key: client.key });
    const server = await startKubeApiServer({
      bookmarkIntervalMs: 200,
      tls: { ...pki.leaf('apiserver', ['DNS:localhost', 'IP:127.0.0.1']), clientCa: pki.ca.cert },
      acceptToken: (credential) => credential === 'x509:gateway-client',
    });
    exportWeb(server, '10.4.0.1');
    const dir = mkdtempSync(join(tmpdir(), 'csg-kubeconfigs-'));
    const membership = new FleetMembership({
      logger: pino({ level: 'silent' }),
      kubeconfigDir: dir,
      pollIntervalMs: 200,
      timing: { backoffInitialMs: 50, backoffMaxMs: 300 },
    });
    let views: readonly MemberView[] = [];
    await membership.start((next) => {
      views = next;
    });
    cleanups.push(async () => {
      await membership.stop();
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
      rmSync(plugin.dir, { recursive: true, force: true });
    });

    const file = join(dir, 'south.kubeconfig');
    writeFileSync(
      file,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [
          {
            name: 'south',
            cluster: {
              server: server.url,
              'certificate-authority-data': Buffer.from(pki.ca.cert).toString('base64'),
            },
          },
        ],
        users: [
          {
            name: 'gateway',
            user: {
              exec: {
                apiVersion: 'client.authentication.k8s.io/v1',
                command: process.execPath,
                args: [plugin.script, plugin.stateFile, plugin.logFile],
                interactiveMode: 'Never',
              },
            },
          },
        ],
        contexts: [{ name: 'south', context: { cluster: 'south', user: 'gateway' } }],
        'current-context': 'south',
      }),
    );
    writeFileSync(join(dir, 'broken.yaml'), 'clusters: [oops');
    writeFileSync(join(dir, '..data'), 'ignored: true');

    const synced = await eventually(
      () => views,
      (v) => expect(byName(v, 'south').state).toBe('synced'),
    );
    expect(byName(synced, 'south').origin).toEqual({ kind: 'Kubeconfig', file });
    expect(byName(synced, 'south').endpointSlices).toHaveLength(1);
    expect(server.requests.length).toBeGreaterThan(0);
    expect(membership.problems).toEqual([expect.stringMatching(/broken\.yaml: not a kubeconfig/)]);
    expect(plugin.runs()[0]?.spec).toEqual({ interactive: false });

    rmSync(file);
    const started = Date.now();
    await eventually(
      () => views,
      (v) => expect(v).toEqual([]),
      2_000,
    );
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});
