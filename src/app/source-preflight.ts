import type { CliOptions } from '../cli/args.ts';
import { checkManifestsDir } from '../sources/file/file-source.ts';

/**
 * What must hold before the gateway opens any port: the manifests folder can be listed, or a Kubernetes
 * configuration is found and readable. A failure throws a SourceError whose message names the flag and the path
 * (or every place looked at), and the program exits non-zero with it.
 */
export async function checkSourceConfig(cli: CliOptions): Promise<void> {
  if (cli.source.kind === 'file') await checkManifestsDir(cli.source.dir);
  else if (cli.source.kind === 'kubernetes') {
    // Loaded only in this mode, as openSource does: @kubernetes/client-node is large.
    const { loadKubeConfig } = await import('../sources/kube/kube-config.ts');
    loadKubeConfig(cli.source.kubeconfig);
  }
}
