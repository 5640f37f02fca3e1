/** A kubeconfig for the API server at `url`: one cluster, context and user, the user's bearer token. */
export function kubeconfigYaml(url: string, namespace: string, token: string): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: test',
    '  cluster:',
    `    server: ${url}`,
    // client-node refuses plain http unless TLS verification is explicitly off.
    '    insecure-skip-tls-verify: true',
    'contexts:',
    '- name: test',
    '  context:',
    '    cluster: test',
    '    user: test',
    `    namespace: ${namespace}`,
    'current-context: test',
    'users:',
    '- name: test',
    '  user:',
    `    token: ${token}`,
    '',
  ].join('\n');
}
