import { describe, expect, it } from 'vitest';
import { membersFromProfiles } from '../../src/fleet/profile-members.ts';
import { parseProviderFile } from '../../src/fleet/provider-file.ts';
import type { ClusterProfile } from '../../src/snapshot/resources.ts';

/** cluster-inventory-api v0.1.2 `pkg/access`: the per-provider policies and KEP-5339's profile extensions. */
const V1 = 'client.authentication.k8s.io/v1';
const ARGS = 'clusterprofiles.multicluster.x-k8s.io/exec/additional-args';
const ENVS = 'clusterprofiles.multicluster.x-k8s.io/exec/additional-envs';

const file = (provider: Record<string, unknown>, top: Record<string, unknown> = {}) =>
  JSON.stringify({
    providers: [
      {
        name: 'ocm',
        execConfig: {
          apiVersion: V1,
          command: 'cp-creds',
          args: ['--hub'],
          env: [{ name: 'A', value: 'file' }],
        },
        ...provider,
      },
    ],
    ...top,
  });

function profileWith(extensions: unknown[]): ClusterProfile {
  return {
    apiVersion: 'multicluster.x-k8s.io/v1alpha1',
    kind: 'ClusterProfile',
    metadata: { name: 'east', namespace: 'fleet' },
    spec: { clusterManager: { name: 'ocm' } },
    status: { accessProviders: [{ name: 'ocm', cluster: { server: 'https://east:6443', extensions } }] },
  } as unknown as ClusterProfile;
}

const EXTENSIONS = [
  { name: ARGS, extension: ['--cluster=east', '--v=2'] },
  { name: ENVS, extension: { A: 'profile', B: 'profile' } },
];

function execFor(provider: Record<string, unknown>, extensions: unknown[] = EXTENSIONS) {
  const { members, problems } = membersFromProfiles(
    [profileWith(extensions)],
    parseProviderFile(file(provider), 'p.json'),
  );
  return { exec: members[0]?.exec, problems };
}

describe('provider file policies (profileSourcedCLIArgsPolicy, profileSourcedEnvVarsPolicy)', () => {
  it('unset: the profile adds nothing to the plugin, as the library', () => {
    const { exec, problems } = execFor({});
    expect(problems).toEqual([]);
    expect(exec).toMatchObject({ args: ['--hub'], env: [{ name: 'A', value: 'file' }] });
  });

  it('Append and AppendIfNotExists: the profile’s args follow the file’s; the file’s variables win', () => {
    const { exec } = execFor({
      profileSourcedCLIArgsPolicy: 'Append',
      profileSourcedEnvVarsPolicy: 'AppendIfNotExists',
    });
    expect(exec?.args).toEqual(['--hub', '--cluster=east', '--v=2']);
    expect(exec?.env).toEqual([
      { name: 'A', value: 'file' },
      { name: 'B', value: 'profile' },
    ]);
  });

  it('Replace: the profile’s variables win; Ignore reads neither extension, even a malformed one', () => {
    expect(execFor({ profileSourcedEnvVarsPolicy: 'Replace' }).exec?.env).toEqual([
      { name: 'A', value: 'profile' },
      { name: 'B', value: 'profile' },
    ]);
    const ignored = execFor({ profileSourcedCLIArgsPolicy: 'Ignore' }, [
      { name: ARGS, extension: 'not a list' },
    ]);
    expect(ignored.problems).toEqual([]);
    expect(ignored.exec?.args).toEqual(['--hub']);
  });

  it('an extension a policy reads that is malformed makes that profile no member, with a problem line', () => {
    const { exec, problems } = execFor({ profileSourcedCLIArgsPolicy: 'Append' }, [
      { name: ARGS, extension: { a: 1 } },
    ]);
    expect(exec).toBeUndefined();
    expect(problems).toEqual([
      `ClusterProfile fleet/east: access provider ocm: cluster.extension ${ARGS} must be a list of strings`,
    ]);
    expect(
      execFor({ profileSourcedEnvVarsPolicy: 'Replace' }, [{ name: ENVS, extension: { A: 1 } }]).problems,
    ).toEqual([
      `ClusterProfile fleet/east: access provider ocm: cluster.extension ${ENVS} must be a map of names to string values`,
    ]);
  });

  it('a different profile extension is a different connection', () => {
    const providers = parseProviderFile(file({ profileSourcedCLIArgsPolicy: 'Append' }), 'p.json');
    const key = (extensions: unknown[]) =>
      membersFromProfiles([profileWith(extensions)], providers).members[0]?.connectionKey;
    expect(key([{ name: ARGS, extension: ['--a'] }])).not.toBe(key([{ name: ARGS, extension: ['--b'] }]));
  });
});

describe('provider file strictness', () => {
  it.each([
    [
      file({ profileSourcedCLIArgsPolicy: 'Prepend' }),
      'p.json: providers[0].profileSourcedCLIArgsPolicy: must be one of Append, Ignore, not "Prepend"',
    ],
    [
      file({ profileSourcedEnvVarsPolicy: 'Merge' }),
      'p.json: providers[0].profileSourcedEnvVarsPolicy: must be one of AppendIfNotExists, Replace, Ignore, not "Merge"',
    ],
    [
      file({}, { defaults: {} }),
      'p.json: unknown field "defaults" (the cluster-inventory-api v0.1.2 format has providers)',
    ],
    [
      file({ profileSourcedArgsPolicy: 'Append' }),
      'p.json: providers[0]: unknown field "profileSourcedArgsPolicy" (the cluster-inventory-api v0.1.2 format has name, execConfig, profileSourcedCLIArgsPolicy, profileSourcedEnvVarsPolicy)',
    ],
    [
      file({ execConfig: { apiVersion: V1, command: 'x', stdinUnavailable: true } }),
      'p.json: providers[0].execConfig: unknown field "stdinUnavailable" (the cluster-inventory-api v0.1.2 format has apiVersion, command, args, env, installHint, provideClusterInfo, interactiveMode)',
    ],
    [
      file({ execConfig: { apiVersion: V1, command: 'x', env: [{ name: 'A', value: 'b', valueFrom: {} }] } }),
      'p.json: providers[0].execConfig.env[0]: unknown field "valueFrom" (the cluster-inventory-api v0.1.2 format has name, value)',
    ],
  ])('refuses %s', (text, message) => {
    expect(() => parseProviderFile(text, 'p.json')).toThrow(message);
  });

  it('an empty policy is the default, as the library’s omitempty string', () => {
    const provider = parseProviderFile(
      file({ profileSourcedCLIArgsPolicy: '', profileSourcedEnvVarsPolicy: '' }),
      'p.json',
    ).get('ocm');
    expect(provider).toMatchObject({ cliArgsPolicy: 'Ignore', envVarsPolicy: 'Ignore' });
  });
});
