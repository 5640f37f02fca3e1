import { readFileSync } from 'node:fs';
import { decodeExecConfig, type ExecConfig } from '../kube/exec-credential.ts';

/** A failure to read `--clusterprofile-provider-file`: refused at start-up, with the field at fault. */
export class ProviderFileError extends Error {
  readonly code = 'PROVIDER_FILE_INVALID';

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ProviderFileError';
  }
}

/**
 * The Cluster Profile API access provider file, as cluster-inventory-api's `pkg/access` and multicluster-runtime's
 * cluster-inventory-api provider read it: `{"providers":[{"name": ..., "execConfig": {...}}]}`, where
 * `execConfig` is a kubeconfig `users[].user.exec`. The name is matched against a ClusterProfile's
 * `status.accessProviders[].name`.
 */
export function parseProviderFile(text: string, file: string): ReadonlyMap<string, ExecConfig> {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new ProviderFileError(`${file}: not JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (typeof doc !== 'object' || doc === null || !Array.isArray((doc as { providers?: unknown }).providers)) {
    throw new ProviderFileError(`${file}: expected {"providers": [...]}`);
  }
  const providers = new Map<string, ExecConfig>();
  for (const [i, entry] of (doc as { providers: unknown[] }).providers.entries()) {
    const where = `${file}: providers[${i}]`;
    if (typeof entry !== 'object' || entry === null)
      throw new ProviderFileError(`${where}: must be an object`);
    const { name, execConfig } = entry as { name?: unknown; execConfig?: unknown };
    if (typeof name !== 'string' || name === '') throw new ProviderFileError(`${where}.name: required`);
    if (providers.has(name)) throw new ProviderFileError(`${where}.name: "${name}" is listed twice`);
    try {
      providers.set(name, decodeExecConfig(execConfig, `${where}.execConfig`));
    } catch (err) {
      throw new ProviderFileError(err instanceof Error ? err.message : String(err), { cause: err });
    }
  }
  return providers;
}

export function readProviderFile(file: string): ReadonlyMap<string, ExecConfig> {
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
