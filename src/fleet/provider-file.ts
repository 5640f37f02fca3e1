import { readFileSync } from 'node:fs';
import { decodeExecConfig, type ExecConfig } from '../kube/exec-credential.ts';
import { isRecord } from '../snapshot/json-object.ts';

/** A failure to read `--clusterprofile-provider-file`: refused at start-up, with the field at fault. */
export class ProviderFileError extends Error {
  readonly code = 'PROVIDER_FILE_INVALID';

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ProviderFileError';
  }
}

/** The release of cluster-inventory-api whose `pkg/access` file format this reader understands (docs/fleet.md). */
export const PROVIDER_FILE_FORMAT = 'cluster-inventory-api v0.1.2';

/** KEP-5339: what a ClusterProfile's `additional-args` extension does to the provider's `execConfig.args`. */
export type ProfileSourcedCliArgsPolicy = 'Append' | 'Ignore';
/** KEP-5339: what its `additional-envs` extension does to `execConfig.env`. */
export type ProfileSourcedEnvVarsPolicy = 'AppendIfNotExists' | 'Replace' | 'Ignore';

/** One `providers[]` entry: its exec plugin, and how far a ClusterProfile may add to the plugin's command line. */
export interface AccessProvider {
  readonly exec: ExecConfig;
  /** `profileSourcedCLIArgsPolicy`; unset is `Ignore`, as in the library. */
  readonly cliArgsPolicy: ProfileSourcedCliArgsPolicy;
  /** `profileSourcedEnvVarsPolicy`; unset is `Ignore`. */
  readonly envVarsPolicy: ProfileSourcedEnvVarsPolicy;
}

const CLI_ARGS_POLICIES: readonly ProfileSourcedCliArgsPolicy[] = ['Append', 'Ignore'];
const ENV_VARS_POLICIES: readonly ProfileSourcedEnvVarsPolicy[] = ['AppendIfNotExists', 'Replace', 'Ignore'];

/**
 * The fields of each level, as the library's Go types declare them (`access.Config`, `access.Provider`,
 * client-go's `clientcmdapi.ExecConfig` and `ExecEnvVar`). The library's `json.Unmarshal` drops anything else
 * without a word; here an unknown field stops the start instead, so that a field of a newer release (or a
 * misspelt one) is never silently not acted on.
 */
const KNOWN_FIELDS = {
  file: ['providers'],
  provider: ['name', 'execConfig', 'profileSourcedCLIArgsPolicy', 'profileSourcedEnvVarsPolicy'],
  execConfig: [
    'apiVersion',
    'command',
    'args',
    'env',
    'installHint',
    'provideClusterInfo',
    'interactiveMode',
  ],
  env: ['name', 'value'],
} as const;

/**
 * The Cluster Profile API access provider file, as cluster-inventory-api's `pkg/access` (v0.1.2) and
 * multicluster-runtime's cluster-inventory-api provider read it: `{"providers":[{"name": ..., "execConfig": {...},
 * "profileSourcedCLIArgsPolicy": ..., "profileSourcedEnvVarsPolicy": ...}]}`, where `execConfig` is a kubeconfig
 * `users[].user.exec`. The name is matched against a ClusterProfile's `status.accessProviders[].name`.
 */
export function parseProviderFile(text: string, file: string): ReadonlyMap<string, AccessProvider> {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new ProviderFileError(`${file}: not JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (!isRecord(doc) || !Array.isArray(doc.providers)) {
    throw new ProviderFileError(`${file}: expected {"providers": [...]}`);
  }
  refuseUnknown(doc, KNOWN_FIELDS.file, file);
  const providers = new Map<string, AccessProvider>();
  for (const [i, entry] of (doc.providers as unknown[]).entries()) {
    const where = `${file}: providers[${i}]`;
    if (!isRecord(entry)) throw new ProviderFileError(`${where}: must be an object`);
    refuseUnknown(entry, KNOWN_FIELDS.provider, where);
    const { name, execConfig } = entry;
    if (typeof name !== 'string' || name === '') throw new ProviderFileError(`${where}.name: required`);
    if (providers.has(name)) throw new ProviderFileError(`${where}.name: "${name}" is listed twice`);
    if (isRecord(execConfig)) {
      refuseUnknown(execConfig, KNOWN_FIELDS.execConfig, `${where}.execConfig`);
      if (Array.isArray(execConfig.env))
        for (const [j, env] of execConfig.env.entries())
          if (isRecord(env)) refuseUnknown(env, KNOWN_FIELDS.env, `${where}.execConfig.env[${j}]`);
    }
    let exec: ExecConfig;
    try {
      exec = decodeExecConfig(execConfig, `${where}.execConfig`);
    } catch (err) {
      throw new ProviderFileError(err instanceof Error ? err.message : String(err), { cause: err });
    }
    providers.set(name, {
      exec,
      cliArgsPolicy: policy(entry, 'profileSourcedCLIArgsPolicy', CLI_ARGS_POLICIES, where),
      envVarsPolicy: policy(entry, 'profileSourcedEnvVarsPolicy', ENV_VARS_POLICIES, where),
    });
  }
  return providers;
}

/** A policy field: unset or empty is `Ignore` (the library's default); another value than its own is refused. */
function policy<P extends string>(
  entry: Readonly<Record<string, unknown>>,
  field: string,
  allowed: readonly P[],
  where: string,
): P | 'Ignore' {
  const value = entry[field];
  if (value === undefined || value === '') return 'Ignore';
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value))
    throw new ProviderFileError(
      `${where}.${field}: must be one of ${allowed.join(', ')}, not ${JSON.stringify(value)}`,
    );
  return value as P;
}

function refuseUnknown(
  object: Readonly<Record<string, unknown>>,
  known: readonly string[],
  where: string,
): void {
  for (const field of Object.keys(object)) {
    if (known.includes(field)) continue;
    throw new ProviderFileError(
      `${where}: unknown field "${field}" (the ${PROVIDER_FILE_FORMAT} format has ${known.join(', ')})`,
    );
  }
}

export function readProviderFile(file: string): ReadonlyMap<string, AccessProvider> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new ProviderFileError(`--clusterprofile-provider-file ${file}: ${code ?? String(err)}`, {
      cause: err,
    });
  }
  return parseProviderFile(text, file);
}
