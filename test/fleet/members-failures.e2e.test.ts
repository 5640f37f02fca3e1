import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FleetMembership } from '../../src/fleet/fleet-membership.ts';
import { memberProblems } from '../../src/fleet/fleet-report.ts';
import type { MemberView } from '../../src/fleet/member-view.ts';
import { captureLogs } from '../kube/helpers.ts';
import type { KubeApiServer } from '../support/kube-api-server/index.ts';
import { byName, ExecPlugin, eventually, exportWeb, startMember } from './members-fixtures.ts';

/**
 * Members that fail in the ways a new user meets first: a plugin that exits 0 with something else than an
 * ExecCredential, credentials the API server refuses, kubeconfig files that are empty or malformed, and a
 * member whose API server goes away. Each is named with its reason and a problem line; none costs another
 * member; a failing member's log is its state changes, not one line per retry.
 */
describe('fleet members that fail', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function setup(backoff = { backoffInitialMs: 50, backoffMaxMs: 400 }) {
    const plugin = new ExecPlugin();
    const dir = mkdtempSync(join(tmpdir(), 'csg-failing-members-'));
    const logs = captureLogs();
    const membership = new FleetMembership({
      logger: logs.logger,
      kubeconfigDir: dir,
      pollIntervalMs: 100,
      timing: { ...backoff, execTimeoutMs: 5_000 },
    });
    let views: readonly MemberView[] = [];
    await membership.start((next) => {
      views = next;
    });
    cleanups.push(async () => {
      await membership.stop();
      rmSync(dir, { recursive: true, force: true });
      rmSync(plugin.dir, { recursive: true, force: true });
    });
    const member = async (token: string): Promise<KubeApiServer> => {
      const server = await startMember(plugin, token);
      cleanups.push(() => server.stop());
      return server;
    };
    /** A kubeconfig file whose user is the exec plugin (told the server, so it hands out that server's token). */
    const writeExecKubeconfig = (name: string, server: KubeApiServer): void => {
      writeFileSync(
        join(dir, name),
        JSON.stringify({
          apiVersion: 'v1',
          kind: 'Config',
          clusters: [{ name: 'c', cluster: { server: server.url, 'insecure-skip-tls-verify': true } }],
          users: [
            {
              name: 'gateway',
              user: {
                exec: {
                  apiVersion: 'client.authentication.k8s.io/v1',
                  command: process.execPath,
                  args: [plugin.script, plugin.stateFile, plugin.logFile],
                  provideClusterInfo: true,
                  interactiveMode: 'Never',
                },
              },
            },
          ],
          contexts: [{ name: 'c', context: { cluster: 'c', user: 'gateway' } }],
          'current-context': 'c',
        }),
      );
    };
    return { plugin, dir, logs, membership, member, writeExecKubeconfig, views: () => views };
  }

  it('makes a member whose plugin prints no ExecCredential an error, named without its output, and retries it', async () => {
    const { plugin, member, writeExecKubeconfig, views } = await setup();
    const east = await member('secret-token-east');
    exportWeb(east, '10.1.0.1');
    plugin.set({ mode: 'notcred' });
    writeExecKubeconfig('east.yaml', east);

    const failed = await eventually(views, (v) => expect(byName(v, 'east').state).toBe('error'));
    const reason = byName(failed, 'east').reason ?? '';
    expect(reason).toMatch(
      /^not an ExecCredential: exec plugin .* exited 0 but printed an object of another kind/,
    );
    expect(memberProblems(failed)).toEqual([
      expect.stringMatching(
        /^warning: fleet member east \(kubeconfig file .*east\.yaml\) is error: not an ExecCredential: /,
      ),
    ]);
    const text = JSON.stringify(failed);
    expect(text).not.toContain('secret-token-east');
    expect(text).not.toContain('stderr-secret');
    expect(east.requests).toHaveLength(0);

    // Retried with backoff (50 ms doubling to 400 ms): runs go on, far fewer than one per 50 ms.
    const firstRuns = plugin.runs().length;
    const started = Date.now();
    await eventually(
      () => plugin.runs().length,
      (runs) => expect(runs).toBeGreaterThanOrEqual(firstRuns + 3),
    );
    const runs = plugin.runs().length - firstRuns;
    expect(runs).toBeLessThanOrEqual(Math.ceil((Date.now() - started) / 50));

    plugin.set({ mode: 'ok' });
    const synced = await eventually(views, (v) => expect(byName(v, 'east').state).toBe('synced'));
    expect(memberProblems(synced)).toEqual([]);
  });

  it('makes a member whose API server refuses the credentials from the start refused, and syncs it once they work', async () => {
    const { plugin, member, writeExecKubeconfig, views } = await setup();
    const west = await member('token-west');
    exportWeb(west, '10.2.0.1');
    west.acceptToken = (token) => token === 'token-west-rotated';
    writeExecKubeconfig('west.yaml', west);

    const refused = await eventually(views, (v) => expect(byName(v, 'west').state).toBe('refused'));
    expect(byName(refused, 'west').reason).toBe('credentials refused (401 Unauthorized)');
    expect(memberProblems(refused)).toEqual([
      expect.stringMatching(
        /^warning: fleet member west \(.*\) is refused: credentials refused \(401 Unauthorized\)$/,
      ),
    ]);

    plugin.set({ tokens: { [west.url]: 'token-west-rotated' } });
    await eventually(views, (v) => expect(byName(v, 'west').state).toBe('synced'));
  });

  it('names an empty or malformed kubeconfig file without quoting it, and only that file pays', async () => {
    const { dir, membership, member, writeExecKubeconfig, views } = await setup();
    const east = await member('token-east');
    exportWeb(east, '10.1.0.1');
    writeExecKubeconfig('east.yaml', east);
    const files: Record<string, string> = {
      'empty.yaml': '',
      'comments.yaml': '# nothing here yet\n',
      'list.yaml': '- token: secret-in-a-list\n',
      'no-clusters.yaml': 'apiVersion: v1\nkind: Config\nclusters: []\nusers: []\n',
      'clusters-map.yaml': 'clusters:\n  token: secret-in-a-map\n',
      'unnamed.yaml': 'clusters:\n- cluster: {server: "https://10.0.0.1"}\ncontexts: []\n',
      'syntax.yaml': 'clusters: [oops\n',
    };
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);

    await eventually(views, (v) => expect(byName(v, 'east').state).toBe('synced'));
    await eventually(
      () => membership.problems,
      (problems) => expect(problems).toHaveLength(Object.keys(files).length),
    );
    const problems = membership.problems.map((p) => p.slice(dir.length + 1));
    expect(problems).toEqual([
      'clusters-map.yaml: not a kubeconfig: clusters is not a list',
      'comments.yaml: not a kubeconfig: no clusters',
      'empty.yaml: not a kubeconfig: no clusters',
      'list.yaml: not a kubeconfig: not a mapping of clusters, users and contexts',
      'no-clusters.yaml: not a kubeconfig: no clusters',
      expect.stringMatching(/^syntax\.yaml: not a kubeconfig: YAML syntax error at line 2: /),
      'unnamed.yaml: not a kubeconfig: clusters[0] has no name',
    ]);
    expect(problems.join('\n')).not.toContain('secret-in');
    expect(views().map((v) => v.name)).toEqual(['east']);
  });

  it('logs a member that keeps failing when its state changes, not on every retry of every kind', async () => {
    const { member, writeExecKubeconfig, logs, views } = await setup({
      backoffInitialMs: 20,
      backoffMaxMs: 1_000,
    });
    const east = await member('token-east');
    exportWeb(east, '10.1.0.1');
    writeExecKubeconfig('east.yaml', east);
    await eventually(views, (v) => expect(byName(v, 'east').state).toBe('synced'));

    const from = logs.lines.length;
    const started = Date.now();
    await east.stop();
    await eventually(views, (v) => expect(byName(v, 'east').state).toBe('stale'));
    // Bounded real time: long enough for every kind to retry many times (20 ms doubling to 1 s).
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const elapsedMs = Date.now() - started;
    const lines = logs.lines.slice(from);
    const retries = lines.filter((l) => /^list\/watch (failed|still failing)/.test(String(l.msg)));
    const seen = lines.filter((l) => Number(l.level) >= 30);
    // Each of the 4 kinds retried several times...
    expect(retries.length).toBeGreaterThanOrEqual(8);
    // ...but what an operator reads (info and above) is the state change, then at most one line per backoff step.
    expect(seen.map((l) => l.msg)).toContain('member state changed');
    expect(seen.length).toBeLessThanOrEqual(1 + Math.ceil(elapsedMs / 1_000));
  });
});
