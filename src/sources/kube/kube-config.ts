import { existsSync, readFileSync } from 'node:fs';
import { KubeConfig } from '@kubernetes/client-node';
import { SourceError } from '../source.ts';

const SERVICE_ACCOUNT = '/var/run/secrets/kubernetes.io/serviceaccount';

export interface LoadedKubeConfig {
  readonly kubeConfig: KubeConfig;
  /** Where it came from, for the startup log. */
  readonly origin: 'kubeconfig' | 'in-cluster' | 'default';
  /** The namespace of the current context, or of the pod's service account in-cluster. */
  readonly namespace: string;
}

/**
 * `--kubeconfig <path>` (or KUBECONFIG, folded in by the CLI) when given; else the pod's service account when
 * running in a cluster; else ~/.kube/config. Failures are SourceErrors with a stable code.
 */
export function loadKubeConfig(path?: string, env: NodeJS.ProcessEnv = process.env): LoadedKubeConfig {
  const kubeConfig = new KubeConfig();
  let origin: LoadedKubeConfig['origin'];
  try {
    if (path) {
      kubeConfig.loadFromFile(path);
      origin = 'kubeconfig';
    } else if (env.KUBERNETES_SERVICE_HOST && existsSync(`${SERVICE_ACCOUNT}/token`)) {
      kubeConfig.loadFromCluster();
      origin = 'in-cluster';
    } else {
      kubeConfig.loadFromDefault();
      origin = 'default';
    }
  } catch (err) {
    throw new SourceError(
      'KUBECONFIG_INVALID',
      `cannot load Kubernetes configuration${path ? ` from ${path}` : ''}: ${String(err)}`,
      {
        cause: err,
      },
    );
  }
  if (!kubeConfig.getCurrentCluster()) {
    throw new SourceError(
      'KUBECONFIG_NO_CLUSTER',
      `no current cluster in the Kubernetes configuration${path ? ` ${path}` : ''}`,
    );
  }
  return { kubeConfig, origin, namespace: currentNamespace(kubeConfig, origin) };
}

function currentNamespace(kubeConfig: KubeConfig, origin: LoadedKubeConfig['origin']): string {
  if (origin === 'in-cluster') {
    try {
      return readFileSync(`${SERVICE_ACCOUNT}/namespace`, 'utf8').trim() || 'default';
    } catch {
      return 'default';
    }
  }
  const context = kubeConfig.getContextObject(kubeConfig.getCurrentContext());
  return context?.namespace || 'default';
}
