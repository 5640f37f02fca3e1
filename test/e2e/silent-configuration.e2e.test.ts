import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FleetReport } from '../../src/fleet/fleet-report.ts';
import { ExecPlugin } from '../fleet/members-fixtures.ts';
import { eventually, freePort, type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { type KubeApiServer, startKubeApiServer } from '../support/kube-api-server/index.ts';

const FIXTURE = new URL('../gateway/fixtures/unserved-objects.yaml', import.meta.url);

/**
 * Issue 42, "No silent configuration", as a user meets it: the gateway run with a manifests folder holding a
 * first try's mistakes and a `--member-kubeconfigs` folder with an empty file and a member whose exec plugin
 * exits 0 with something that is not an ExecCredential. /config_dump's problems name each, the log has each as a
 * warning, and none of the plugin's output shows anywhere.
 */
describe('a gateway that says what it cannot act on', () => {
  const plugin = new ExecPlugin();
  const kubeconfigs = mkdtempSync(join(tmpdir(), 'csg-silent-'));
  let member: KubeApiServer;
  let gw: GatewayProcess;

  beforeAll(async () => {
    member = await startKubeApiServer({});
    member.acceptToken = (token) => token === 'member-secret-token';
    plugin.set({ mode: 'notcred', tokens: { [member.url]: 'member-secret-token' } });
    writeFileSync(join(kubeconfigs, 'empty.yaml'), '');
    writeFileSync(
      join(kubeconfigs, 'south.yaml'),
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'south', cluster: { server: member.url, 'insecure-skip-tls-verify': true } }],
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
        contexts: [{ name: 'south', context: { cluster: 'south', user: 'gateway' } }],
        'current-context': 'south',
      }),
    );
    const port = await freePort();
    gw = await startGateway({
      manifests: { 'first-try.yaml': readFileSync(FIXTURE, 'utf8') },
      listenerPortOffset: port - 80,
      args: ['--member-kubeconfigs', kubeconfigs, '--cluster', 'east'],
      startTimeoutMs: 50_000,
    });
  }, 60_000);

  afterAll(async () => {
    await gw?.stop();
    await member?.stop();
    rmSync(kubeconfigs, { recursive: true, force: true });
    rmSync(plugin.dir, { recursive: true, force: true });
  });

  async function dump(): Promise<{ problems: string[]; fleet: FleetReport }> {
    return JSON.parse((await gw.adminGet('/config_dump')).body) as { problems: string[]; fleet: FleetReport };
  }

  it('lists every object it cannot act on in /config_dump, each a warning naming the object and why', async () => {
    const { problems } = await eventually(async () => {
      const current = await dump();
      expect(current.problems.some((p) => p.includes('fleet member south'))).toBe(true);
      return current;
    }, 15_000);
    const expected = [
      'warning: HTTPRoute shop/typo: spec.parentRefs[0]: Gateway shop/egde not found (Gateways in shop: classless, edge, theirs); the route is not attached there',
      'warning: TCPRoute shop/db: spec.parentRefs[0]: Gateway shop/egde not found (Gateways in shop: classless, edge, theirs); the route is not attached there',
      'warning: HTTPRoute shop/elsewhere: no parent of this route is served by clusterset-gateway.io/gateway-controller: spec.parentRefs[0]: Gateway shop/theirs is of GatewayClass other (controller example.com/other-controller)',
      'warning: Gateway shop/classless: spec.gatewayClassName: GatewayClass clusterest not found; no controller serves this Gateway',
      'warning: HTTPRoute shop/missing-backends: ResolvedRefs=False BackendNotFound: spec.rules[0].backendRefs[0]: Service shop/wbe not found; spec.rules[1].backendRefs[0]: ServiceImport shop/payments not found',
      'warning: ClusterSelectionPolicy shop/pin-payments: Accepted=False TargetNotFound: no target exists: ServiceImport/shop/payments',
      'warning: BackendTLSPolicy shop/web-tls: spec.targetRefs[0]: Service shop/wbe not found; the policy applies to no backend there',
      'warning: XBackendTrafficPolicy shop/web-budget: spec.targetRefs[0]: Service shop/wbe not found; the policy applies to no backend there',
      'warning: ServiceImport shop/cart: port 80 has no endpoints in any cluster; requests to it are answered 503 until a cluster exports ready ones',
      `${join(kubeconfigs, 'empty.yaml')}: not a kubeconfig: no clusters`,
    ];
    for (const line of expected) expect(problems).toContain(line);
    expect(problems).toContainEqual(
      expect.stringMatching(
        /^warning: fleet member south \(kubeconfig file .*south\.yaml\) is error: not an ExecCredential: exec plugin .* exited 0 but printed an object of another kind/,
      ),
    );
    expect(problems).toHaveLength(expected.length + 1);
  });

  it('shows the member as error with its reason, retried, and never the plugin’s output', async () => {
    const { fleet } = await dump();
    expect(fleet.members).toEqual([
      expect.objectContaining({
        name: 'south',
        state: 'error',
        reason: expect.stringMatching(/^not an ExecCredential: /),
      }),
    ]);
    await eventually(async () => expect(plugin.runs().length).toBeGreaterThanOrEqual(2), 10_000);
    const everything = `${JSON.stringify(await dump())}\n${gw.output()}`;
    expect(everything).not.toContain('member-secret-token');
    expect(everything).not.toContain('stderr-secret');
  });

  it('logs each of them at level warn', () => {
    const warnings = gw
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { level: number; msg: string; problem?: string; reason?: string })
      .filter((line) => line.level === 40)
      .map((line) => `${line.msg} ${line.problem ?? line.reason ?? ''}`);
    for (const fragment of [
      'ParentNotFound: HTTPRoute shop/typo',
      'ParentNotOurs: HTTPRoute shop/elsewhere',
      'RefsNotResolved: HTTPRoute shop/missing-backends',
      'NotAccepted: ClusterSelectionPolicy shop/pin-payments',
      'PolicyTargetNotFound: BackendTLSPolicy shop/web-tls',
      'ServiceImportWithoutEndpoints: ServiceImport shop/cart',
      'not a fleet member',
      'member state changed not an ExecCredential',
    ])
      expect(
        warnings.some((w) => w.includes(fragment)),
        fragment,
      ).toBe(true);
  });
});
