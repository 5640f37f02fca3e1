import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDemoFleet } from '../../src/demo/members.ts';
import type { RunningPod } from '../../src/demo/topology.ts';

/**
 * kubectl, the real binary, against the demo's simulated member clusters: HTTPS, the exec credential plugin in
 * the printed kubeconfig, discovery, list, delete, and `create` with kubectl's default strict field validation
 * (which it leaves to the server once the server's OpenAPI v3 says it can).
 */
const pod = (service: string, cluster: string, port: number): RunningPod => ({
  service,
  protocol: 'http',
  pod: `${service}-${cluster}-1`,
  cluster,
  region: cluster === 'west-1' ? 'us-west' : 'us-east',
  zone: `${cluster}-a`,
  node: `${cluster}-node-a`,
  port,
});

function kubectl(
  kubeconfig: string,
  args: readonly string[],
  stdin?: string,
): Promise<{ code: number; out: string }> {
  return new Promise((done) => {
    const child = execFile(
      'kubectl',
      ['--kubeconfig', kubeconfig, ...args],
      { timeout: 30_000 },
      (error, stdout, stderr) => {
        if (error && (error as NodeJS.ErrnoException).code === 'ENOENT')
          throw new Error('this test needs kubectl on PATH (scripts/install-test-tools.sh installs it)');
        done({ code: error ? Number(error.code ?? 1) : 0, out: `${stdout}${stderr}` });
      },
    );
    if (stdin !== undefined) child.stdin?.end(stdin);
  });
}

describe('kubectl against the demo members', () => {
  const dir = mkdtempSync(join(tmpdir(), 'csg-kubectl-'));
  let fleet: Awaited<ReturnType<typeof startDemoFleet>>;
  let kubeconfig: string;

  beforeAll(async () => {
    fleet = await startDemoFleet(
      [pod('web', 'east-1', 1111), pod('web', 'west-1', 2222), pod('api', 'west-1', 3333)],
      dir,
    );
    kubeconfig = join(dir, 'copied.kubeconfig');
    writeFileSync(kubeconfig, readFileSync(fleet.kubeconfigFile));
  });
  afterAll(async () => {
    await fleet?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('lists what each member exports, authenticated by the exec plugin', async () => {
    const west = await kubectl(kubeconfig, [
      '--context',
      'west-1',
      'get',
      'serviceexports,endpointslices',
      '-A',
    ]);
    expect(west.code).toBe(0);
    expect(west.out).toMatch(/demo\s+serviceexport\.multicluster\.x-k8s\.io\/api\s/);
    expect(west.out).toMatch(/demo\s+endpointslice\.discovery\.k8s\.io\/web-west-1-1\s/);
    expect(west.out).not.toMatch(/web-east-1-1/);
    const east = await kubectl(kubeconfig, [
      '--context',
      'east-1',
      '-n',
      'demo',
      'get',
      'endpointslice',
      'web-east-1-1',
      '-o',
      'jsonpath={.ports[0].port}',
    ]);
    expect(east).toEqual({ code: 0, out: '1111' });
  });

  it('refuses a token the member does not know', async () => {
    const bad = join(dir, 'bad.kubeconfig');
    const member = fleet.members.find((m) => m.cluster === 'east-1');
    writeFileSync(
      bad,
      readFileSync(fleet.kubeconfigFile, 'utf8').replace(
        /users:[\s\S]*?contexts:/,
        'users:\n  - name: demo\n    user:\n      token: guessed\ncontexts:',
      ),
    );
    const result = await kubectl(bad, ['--context', 'east-1', 'get', 'serviceexports', '-A']);
    expect(result.code).not.toBe(0);
    expect(result.out).toMatch(/Unauthorized|must be logged in|provide credentials/);
    expect(member?.server.unauthorizedCount).toBeGreaterThan(0);
  });

  it('deletes and creates, with strict field validation done by the server', async () => {
    const exportWeb = {
      apiVersion: 'multicluster.x-k8s.io/v1beta1',
      kind: 'ServiceExport',
      metadata: { name: 'web', namespace: 'demo' },
    };
    const deleted = await kubectl(kubeconfig, [
      '--context',
      'west-1',
      '-n',
      'demo',
      'delete',
      'serviceexport',
      'web',
    ]);
    expect(deleted.out).toMatch(/serviceexport\.multicluster\.x-k8s\.io "web" deleted/);
    const typo = await kubectl(
      kubeconfig,
      ['--context', 'west-1', 'create', '-f', '-'],
      JSON.stringify({ ...exportWeb, spec: { exportTo: 'all' } }),
    );
    expect(typo.code).not.toBe(0);
    expect(typo.out).toMatch(/unknown field "spec.exportTo"/);
    const created = await kubectl(
      kubeconfig,
      ['--context', 'west-1', 'create', '-f', '-'],
      JSON.stringify(exportWeb),
    );
    expect(created).toMatchObject({
      code: 0,
      out: expect.stringMatching(/serviceexport\.multicluster\.x-k8s\.io\/web created/),
    });
  });
});
