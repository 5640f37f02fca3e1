import { accessSync, constants, existsSync, readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, isAbsolute, join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { kubeconfigShapeProblem } from '../../kube/kubeconfig-shape.ts';
import { SourceError } from '../../snapshot/source.ts';

const SERVICE_ACCOUNT = '/var/run/secrets/kubernetes.io/serviceaccount';

export interface LoadedKubeConfig {
  readonly kubeConfig: KubeConfig;
  /** Where it came from, for the startup log. */
  readonly origin: 'kubeconfig' | 'KUBECONFIG' | 'in-cluster' | 'default';
  /** The namespace of the current context, or of the pod's service account in-cluster. */
  readonly namespace: string;
}

/** Where a configuration may come from: the environment and the files a lookup reads. */
export interface KubeConfigPlaces {
  readonly env?: NodeJS.ProcessEnv;
  /** The pod's service account folder (token, ca.crt, namespace): where in-cluster detection looks. */
  readonly serviceAccountDir?: string;
  readonly home?: string;
}

/**
 * The places client-go's controllers look, in order: `--kubeconfig <path>`, the KUBECONFIG list, the pod's
 * service account when running in a cluster, then ~/.kube/config. The first place that exists is used; when none
 * does, the SourceError names every place and why it did not count. @kubernetes/client-node's loadFromDefault
 * would fall back to an unauthenticated http://localhost:8080 instead, and the gateway would retry it forever.
 */
export function loadKubeConfig(path?: string, places: KubeConfigPlaces = {}): LoadedKubeConfig {
  const env = places.env ?? process.env;
  const serviceAccount = places.serviceAccountDir ?? SERVICE_ACCOUNT;
  const home = places.home ?? env.HOME ?? homedir();
  const kubeConfig = new KubeConfig();
  const looked: string[] = [];
  let origin: LoadedKubeConfig['origin'] | undefined;
  let from = '';
  if (path) {
    if (!existsSync(path)) {
      throw new SourceError('KUBECONFIG_NOT_FOUND', `--kubeconfig ${path}: no such file`);
    }
    load(() => kubeConfig.loadFromFile(path), `--kubeconfig ${path}`, [path]);
    origin = 'kubeconfig';
    from = ` ${path}`;
  } else {
    looked.push('--kubeconfig: not given');
    const listed = (env.KUBECONFIG ?? '').split(delimiter).filter((p) => p !== '');
    const present = listed.filter((p) => existsSync(p));
    if (present.length > 0) {
      load(
        () => {
          for (const [i, file] of present.entries()) {
            if (i === 0) kubeConfig.loadFromFile(file);
            else {
              const more = new KubeConfig();
              more.loadFromFile(file);
              kubeConfig.mergeConfig(more, true);
            }
          }
        },
        `KUBECONFIG ${present.join(delimiter)}`,
        present,
      );
      origin = 'KUBECONFIG';
      from = ` ${present.join(delimiter)}`;
    } else {
      looked.push(listed.length === 0 ? 'KUBECONFIG: not set' : `KUBECONFIG=${env.KUBECONFIG}: no such file`);
      const token = join(serviceAccount, 'token');
      if (env.KUBERNETES_SERVICE_HOST && existsSync(token)) {
        load(() => kubeConfig.loadFromCluster(), 'the in-cluster service account');
        origin = 'in-cluster';
      } else {
        looked.push(
          env.KUBERNETES_SERVICE_HOST
            ? `in-cluster service account: ${token}: no such file`
            : 'in-cluster service account: KUBERNETES_SERVICE_HOST is not set (not running in a pod)',
        );
        const defaultFile = join(home, '.kube', 'config');
        if (existsSync(defaultFile)) {
          load(() => kubeConfig.loadFromFile(defaultFile), defaultFile, [defaultFile]);
          origin = 'default';
          from = ` ${defaultFile}`;
        } else looked.push(`${defaultFile}: no such file`);
      }
    }
  }
  if (origin === undefined) {
    throw new SourceError(
      'KUBECONFIG_NOT_FOUND',
      `--kubernetes: no Kubernetes configuration found; looked at:\n${looked.map((l) => `  - ${l}`).join('\n')}\nGive one with --kubeconfig <path>, or run in a pod with a service account.`,
    );
  }
  if (!kubeConfig.getCurrentCluster()) {
    throw new SourceError(
      'KUBECONFIG_NO_CLUSTER',
      `no current cluster in the Kubernetes configuration${from}: ${whyNoCluster(kubeConfig)}`,
    );
  }
  const missingPlugin = missingExecPlugin(kubeConfig, env, path);
  if (missingPlugin !== undefined) {
    throw new SourceError(
      'KUBECONFIG_EXEC_NOT_FOUND',
      `${missingPlugin} (the Kubernetes configuration${from})`,
    );
  }
  return { kubeConfig, origin, namespace: currentNamespace(kubeConfig, origin, serviceAccount) };
}

function whyNoCluster(kubeConfig: KubeConfig): string {
  const name = kubeConfig.getCurrentContext();
  if (!name) return 'current-context is not set (kubectl config use-context <name>)';
  const context = kubeConfig.getContextObject(name);
  if (!context) return `current-context "${name}" names no context defined there`;
  return `context "${name}" names cluster "${context.cluster}", which is not defined there`;
}

/**
 * The current user's exec credential plugin, when it cannot be found: a configuration error that retrying would
 * never fix, so it fails the start like a missing file. A command with a slash is a path (relative to the working
 * folder or, as client-go resolves it, to the kubeconfig's folder); a bare name is looked up in PATH.
 */
function missingExecPlugin(
  kubeConfig: KubeConfig,
  env: NodeJS.ProcessEnv,
  kubeconfigPath: string | undefined,
): string | undefined {
  const user = kubeConfig.getCurrentUser();
  const command: unknown = user?.exec?.command;
  if (typeof command !== 'string' || command === '') return undefined;
  const candidates = command.includes('/')
    ? [command, ...(kubeconfigPath && !isAbsolute(command) ? [join(dirname(kubeconfigPath), command)] : [])]
    : (env.PATH ?? '')
        .split(delimiter)
        .filter((dir) => dir !== '')
        .map((dir) => join(dir, command));
  if (candidates.some(isExecutableFile)) return undefined;
  const hint: unknown = user?.exec?.installHint;
  return `exec credential plugin "${command}" of user "${user?.name}" not found${command.includes('/') ? '' : ' in PATH'}${typeof hint === 'string' && hint !== '' ? `: ${hint.trim()}` : ''}`;
}

function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Reads a configuration; `files` are checked first, so a malformed one is named rather than crashing the reader. */
function load(read: () => void, where: string, files: readonly string[] = []): void {
  for (const file of files) {
    let problem: string | undefined;
    try {
      problem = kubeconfigShapeProblem(readFileSync(file, 'utf8'), { requireClusters: false });
    } catch {
      continue; // unreadable: `read` says why
    }
    if (problem !== undefined) {
      const which = files.length > 1 ? `${file}: ` : '';
      throw new SourceError(
        'KUBECONFIG_INVALID',
        `cannot load Kubernetes configuration from ${where}: ${which}not a kubeconfig: ${problem}`,
      );
    }
  }
  try {
    read();
  } catch (err) {
    throw new SourceError(
      'KUBECONFIG_INVALID',
      `cannot load Kubernetes configuration from ${where}: ${err instanceof Error ? err.message : String(err)}`,
      { cause: err },
    );
  }
}

function currentNamespace(
  kubeConfig: KubeConfig,
  origin: LoadedKubeConfig['origin'],
  serviceAccount: string,
): string {
  if (origin === 'in-cluster') {
    try {
      return readFileSync(join(serviceAccount, 'namespace'), 'utf8').trim() || 'default';
    } catch {
      return 'default';
    }
  }
  const context = kubeConfig.getContextObject(kubeConfig.getCurrentContext());
  return context?.namespace || 'default';
}
