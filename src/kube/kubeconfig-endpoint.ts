import type { KubeConfig } from '@kubernetes/client-node';
import type { ApiCredentials, ApiEndpoint } from './api-endpoint.ts';

/**
 * The API server of a @kubernetes/client-node KubeConfig's current context, with the credentials it computes for
 * each request (token, token file, client certificate, exec plugin, basic auth, impersonation). Used where the
 * gateway reads a user's kubeconfig (`--kubernetes`, `--member-kubeconfigs`); the fleet's ClusterProfile path
 * builds its endpoints without the library.
 */
export function endpointFromKubeConfig(kubeConfig: KubeConfig): ApiEndpoint {
  const cluster = kubeConfig.getCurrentCluster();
  if (!cluster) throw new Error('no current cluster in the kubeconfig');
  return {
    server: cluster.server,
    ...(cluster.proxyUrl ? { proxyUrl: cluster.proxyUrl } : {}),
    async credentials(): Promise<ApiCredentials> {
      const options: {
        headers?: Record<string, string>;
        ca?: string | Buffer;
        cert?: string | Buffer;
        key?: string | Buffer;
        rejectUnauthorized?: boolean;
        servername?: string;
        auth?: string;
      } = { headers: {} };
      await kubeConfig.applyToHTTPSOptions(options);
      const headers = { ...options.headers };
      if (options.auth) headers.authorization = `Basic ${Buffer.from(options.auth).toString('base64')}`;
      return {
        headers,
        ...(options.ca ? { ca: options.ca } : {}),
        ...(options.cert ? { cert: options.cert } : {}),
        ...(options.key ? { key: options.key } : {}),
        ...(options.rejectUnauthorized === false ? { insecureSkipTlsVerify: true } : {}),
        ...(options.servername ? { tlsServerName: options.servername } : {}),
      };
    },
  };
}
