import { describe, expect, it } from 'vitest';
import { parseCli } from '../../src/cli/args.ts';
import { membersFromProfiles } from '../../src/fleet/profile-members.ts';
import { parseProviderFile } from '../../src/fleet/provider-file.ts';
import { ExecCredentialError, parseExecCredential } from '../../src/kube/exec-credential.ts';
import type { ClusterProfile } from '../../src/snapshot/resources.ts';

const V1 = 'client.authentication.k8s.io/v1';
const providers = parseProviderFile(
  JSON.stringify({
    providers: [
      {
        name: 'ocm',
        execConfig: { apiVersion: V1, command: '/bin/cp-creds', args: ['--x'], provideClusterInfo: true },
      },
      {
        name: 'secretreader',
        execConfig: { apiVersion: `${V1}beta1`, command: 'reader', env: [{ name: 'A', value: 'b' }] },
      },
    ],
  }),
  'providers.json',
);

function profile(name: string, status: Record<string, unknown>): ClusterProfile {
  return {
    apiVersion: 'multicluster.x-k8s.io/v1alpha1',
    kind: 'ClusterProfile',
    metadata: { name, namespace: 'fleet' },
    spec: { clusterManager: { name: 'ocm' } },
    status,
  } as unknown as ClusterProfile;
}

describe('the provider file', () => {
  it('reads upstream execConfig fields', () => {
    expect(providers.get('ocm')).toEqual({
      exec: { apiVersion: V1, command: '/bin/cp-creds', args: ['--x'], env: [], provideClusterInfo: true },
      cliArgsPolicy: 'Ignore',
      envVarsPolicy: 'Ignore',
    });
    expect(providers.get('secretreader')?.exec.env).toEqual([{ name: 'A', value: 'b' }]);
  });

  it.each([
    ['{', /not JSON/],
    ['{"providers": {}}', /expected \{"providers": \[\.\.\.\]\}/],
    ['{"providers":[{"execConfig":{}}]}', /providers\[0\]\.name: required/],
    [`{"providers":[{"name":"a","execConfig":{"apiVersion":"v9","command":"x"}}]}`, /execConfig\.apiVersion/],
    [`{"providers":[{"name":"a","execConfig":{"apiVersion":"${V1}"}}]}`, /execConfig\.command: required/],
    [
      `{"providers":[{"name":"a","execConfig":{"apiVersion":"${V1}","command":"x","env":[{"name":"A"}]}}]}`,
      /execConfig\.env\[0\]/,
    ],
    [
      `{"providers":[{"name":"a","execConfig":{"apiVersion":"${V1}","command":"x"}},{"name":"a","execConfig":{"apiVersion":"${V1}","command":"x"}}]}`,
      /listed twice/,
    ],
  ])('refuses %s naming the field', (text, message) => {
    expect(() => parseProviderFile(text, 'p.json')).toThrow(message);
  });
});

describe('ClusterProfiles to members', () => {
  it('takes server, CA, TLS name, proxy and the exec extension from the first entry with a configured provider', () => {
    const { members, problems } = membersFromProfiles(
      [
        profile('east', {
          accessProviders: [
            { name: 'unknown', cluster: { server: 'https://wrong:6443' } },
            {
              name: 'ocm',
              cluster: {
                server: 'https://east.example:6443/',
                'certificate-authority-data': 'Q0E=',
                'tls-server-name': 'api.east',
                'proxy-url': 'http://proxy:3128',
                extensions: [
                  { name: 'client.authentication.k8s.io/exec', extension: { clusterName: 'east' } },
                ],
              },
            },
          ],
          properties: [{ name: 'topology.kubernetes.io/region', value: 'eu-west-1' }],
          conditions: [{ type: 'ControlPlaneHealthy', status: 'False', reason: 'Lost', message: 'no lease' }],
        }),
      ],
      providers,
    );
    expect(problems).toEqual([]);
    expect(members).toHaveLength(1);
    expect(members[0]).toMatchObject({
      key: 'fleet/east',
      origin: { kind: 'ClusterProfile', namespace: 'fleet', name: 'east', provider: 'ocm' },
      cluster: {
        server: 'https://east.example:6443',
        caData: 'Q0E=',
        tlsServerName: 'api.east',
        proxyUrl: 'http://proxy:3128',
        execExtension: { clusterName: 'east' },
      },
      properties: { 'topology.kubernetes.io/region': 'eu-west-1' },
      unhealthy: 'ClusterProfile reports ControlPlaneHealthy=False (Lost: no lease)',
    });
  });

  it('reads the deprecated credentialProviders, and says why other profiles are no members', () => {
    const { members, problems } = membersFromProfiles(
      [
        profile('old', {
          credentialProviders: [{ name: 'secretreader', cluster: { server: 'https://old:6443' } }],
        }),
        profile('none', {}),
        profile('foreign', { accessProviders: [{ name: 'gke', cluster: { server: 'https://g:443' } }] }),
        profile('noserver', { accessProviders: [{ name: 'ocm', cluster: {} }] }),
        profile('creds', { accessProviders: [{ name: 'ocm', cluster: { server: 'https://u:p@x:6443' } }] }),
      ],
      providers,
    );
    expect(members.map((m) => m.key)).toEqual(['fleet/old']);
    expect(problems).toEqual([
      'ClusterProfile fleet/creds: access provider ocm: cluster.server must not carry credentials',
      'ClusterProfile fleet/foreign: no access provider matches --clusterprofile-provider-file (it offers: gke)',
      'ClusterProfile fleet/none: no status.accessProviders yet',
      'ClusterProfile fleet/noserver: access provider ocm: cluster.server is missing',
    ]);
  });
});

describe('ExecCredential output', () => {
  const ok = (status: Record<string, unknown>, apiVersion = V1) =>
    JSON.stringify({ apiVersion, kind: 'ExecCredential', status });

  it('reads a token, a client certificate and the expiry', () => {
    expect(
      parseExecCredential(ok({ token: 't', expirationTimestamp: '2030-01-01T00:00:00Z' }), V1, 'p'),
    ).toEqual({
      token: 't',
      expiresAtMs: Date.parse('2030-01-01T00:00:00Z'),
    });
    expect(parseExecCredential(ok({ clientCertificateData: 'C', clientKeyData: 'K' }), V1, 'p')).toEqual({
      clientCertificateData: 'C',
      clientKeyData: 'K',
    });
  });

  it.each([
    ['token=secret', /^not an ExecCredential: .* not JSON/],
    ['null', /^not an ExecCredential: .* JSON that is not an object \(null\)/],
    ['["secret"]', /^not an ExecCredential: .* JSON that is not an object \(an array\)/],
    ['{"token":"secret"}', /^not an ExecCredential: .* an object without kind/],
    [
      '{"kind":"Config","users":[{"user":{"token":"secret"}}]}',
      /^not an ExecCredential: .* an object of another kind/,
    ],
    [ok({ token: 'secret' }, `${V1}beta1`), /apiVersion/],
    [ok({}), /neither a token nor a client certificate/],
    [ok({ clientCertificateData: 'secret' }), /only one of/],
    [ok({ token: 'secret', expirationTimestamp: 'tomorrow' }), /RFC 3339/],
    [ok({ token: 42 }), /status\.token is not a string/],
  ])('refuses %s without quoting it', (stdout, message) => {
    let error: unknown;
    try {
      parseExecCredential(stdout, V1, 'plugin');
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ExecCredentialError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).not.toContain('secret');
  });
});

describe('fleet flags', () => {
  it('reads the provider file, the kubeconfig folder and the plugin timeout', () => {
    expect(parseCli(['--manifests', 'm', '--clusterprofile-provider-file', 'p.json'], {}).fleet).toEqual({
      providerFile: 'p.json',
      execTimeoutMs: 30_000,
      writeExportStatus: false,
    });
    expect(parseCli(['--member-kubeconfigs', 'dir', '--member-exec-timeout-ms', '5000'], {}).fleet).toEqual({
      kubeconfigDir: 'dir',
      execTimeoutMs: 5000,
      writeExportStatus: false,
    });
    expect(
      parseCli(['--member-kubeconfigs', 'dir', '--write-export-status'], {}).fleet?.writeExportStatus,
    ).toBe(true);
    expect(() => parseCli(['--write-export-status'], {})).toThrow(/needs --clusterprofile-provider-file/);
    expect(parseCli([], {}).fleet).toBeUndefined();
    expect(() => parseCli(['--member-exec-timeout-ms', '5000'], {})).toThrow(
      /needs --clusterprofile-provider-file/,
    );
  });
});
