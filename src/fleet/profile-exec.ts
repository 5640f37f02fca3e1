import type { ExecConfig } from '../kube/exec-credential.ts';
import type { AccessProvider } from './provider-file.ts';

/**
 * KEP-5339's reserved `cluster.extensions` of a ClusterProfile access provider: more arguments and environment
 * variables for the exec plugin, taken only as far as the provider file's policies allow (cluster-inventory-api
 * `pkg/access`, v0.1.2).
 */
export const ADDITIONAL_ARGS_EXTENSION = 'clusterprofiles.multicluster.x-k8s.io/exec/additional-args';
export const ADDITIONAL_ENVS_EXTENSION = 'clusterprofiles.multicluster.x-k8s.io/exec/additional-envs';

/**
 * The provider's exec plugin for one profile's cluster: `Append` adds the `additional-args` list after the
 * file's args; `AppendIfNotExists` adds the `additional-envs` variables the file does not set, `Replace` lets
 * them override the file's; `Ignore` (the default) reads neither extension. An extension the policy reads but
 * that is not a list of strings (args) or a map of strings (envs) makes the profile unusable: the answer is why.
 */
export function execForProfile(
  provider: AccessProvider,
  extensions: readonly Readonly<Record<string, unknown>>[],
): ExecConfig | string {
  let exec = provider.exec;
  const extension = (name: string) => extensions.find((e) => e.name === name);
  const args = extension(ADDITIONAL_ARGS_EXTENSION);
  if (args !== undefined && provider.cliArgsPolicy === 'Append') {
    const value = args.extension;
    if (!Array.isArray(value) || value.some((a) => typeof a !== 'string'))
      return `extension ${ADDITIONAL_ARGS_EXTENSION} must be a list of strings`;
    exec = { ...exec, args: [...exec.args, ...(value as string[])] };
  }
  const envs = extension(ADDITIONAL_ENVS_EXTENSION);
  if (envs !== undefined && provider.envVarsPolicy !== 'Ignore') {
    const value = envs.extension;
    if (
      typeof value !== 'object' ||
      value === null ||
      Array.isArray(value) ||
      Object.values(value).some((v) => typeof v !== 'string')
    )
      return `extension ${ADDITIONAL_ENVS_EXTENSION} must be a map of names to string values`;
    const extra = value as Readonly<Record<string, string>>;
    const replace = provider.envVarsPolicy === 'Replace';
    const own = new Set(exec.env.map((e) => e.name));
    exec = {
      ...exec,
      env: [
        ...exec.env.map((e) =>
          replace && Object.hasOwn(extra, e.name) ? { name: e.name, value: extra[e.name] as string } : e,
        ),
        ...Object.entries(extra)
          .filter(([name]) => !own.has(name))
          .map(([name, v]) => ({ name, value: v })),
      ],
    };
  }
  return exec;
}
