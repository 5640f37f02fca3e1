import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { SourceError } from '../source.ts';

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
    load(() => kubeConfig.loadFromFile(path), `--kubeconfig ${path}`);
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
          load(() => kubeConfig.loadFromFile(defaultFile), defaultFile);
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
      `no current cluster in the Kubernetes configuration${from} (current-context: "${kubeConfig.getCurrentContext()}")`,
    );
  }
  return { kubeConfig, origin, namespace: currentNamespace(kubeConfig, origin, serviceAccount) };
}

function load(read: () => void, where: string): void {
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
