import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { decodeExecConfig } from '../kube/exec-credential.ts';
import { endpointFromKubeConfig } from '../kube/kubeconfig-endpoint.ts';
import { kubeconfigShapeProblem } from '../kube/kubeconfig-shape.ts';
import type { MemberAuth } from './member-connection.ts';
import type { MemberCluster } from './profile-members.ts';

/** A member found as a kubeconfig file in `--member-kubeconfigs`. */
export interface KubeconfigMember {
  /** The file's path: the member's key. */
  readonly key: string;
  /** The file's base name without a `.yaml`/`.yml`/`.kubeconfig`/`.conf` ending. */
  readonly fileName: string;
  readonly cluster: MemberCluster;
  readonly auth: MemberAuth;
  /** Changes when the file's content changes. */
  readonly connectionKey: string;
}

export interface KubeconfigScan {
  readonly members: readonly KubeconfigMember[];
  /** Files that are not usable kubeconfigs: `file: why`. */
  readonly problems: readonly string[];
}

const ENDINGS = /\.(ya?ml|kubeconfig|conf|config)$/i;
const MAX_FILE_BYTES = 1024 * 1024;

/**
 * Reads every kubeconfig file in `dir` (its current context), as multicluster-runtime's file provider does;
 * hidden files (`.`, Kubernetes Secret volume internals such as `..data`) and folders are skipped. `previous`
 * avoids re-reading files whose size and modification time did not change.
 */
export function scanKubeconfigDir(
  dir: string,
  previous: ReadonlyMap<
    string,
    { readonly stamp: string; readonly result: KubeconfigMember | string }
  > = new Map(),
): { scan: KubeconfigScan; cache: Map<string, { stamp: string; result: KubeconfigMember | string }> } {
  const cache = new Map<string, { stamp: string; result: KubeconfigMember | string }>();
  const members: KubeconfigMember[] = [];
  const problems: string[] = [];
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch (err) {
    return {
      scan: {
        members,
        problems: [`--member-kubeconfigs ${dir}: ${(err as NodeJS.ErrnoException).code ?? err}`],
      },
      cache,
    };
  }
  for (const name of names) {
    if (name.startsWith('.')) continue;
    const file = join(dir, name);
    let stamp: string;
    try {
      const stat = statSync(file);
      if (!stat.isFile()) continue;
      stamp = `${stat.size}:${stat.mtimeMs}`;
      if (stat.size > MAX_FILE_BYTES) {
        cache.set(file, { stamp, result: `larger than ${MAX_FILE_BYTES} bytes` });
        problems.push(`${file}: larger than ${MAX_FILE_BYTES} bytes`);
        continue;
      }
    } catch {
      continue; // removed between readdir and stat
    }
    const known = previous.get(file);
    const result = known?.stamp === stamp ? known.result : readKubeconfigMember(file);
    cache.set(file, { stamp, result });
    if (typeof result === 'string') problems.push(`${file}: ${result}`);
    else members.push(result);
  }
  return { scan: { members, problems }, cache };
}

/** One kubeconfig file to a member, or why it is not one (never quoting the file: it may hold a token). */
export function readKubeconfigMember(file: string): KubeconfigMember | string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    return String((err as NodeJS.ErrnoException).code ?? err);
  }
  const shape = kubeconfigShapeProblem(text);
  if (shape !== undefined) return `not a kubeconfig: ${shape}`;
  const loaded = new KubeConfig();
  try {
    loaded.loadFromString(text);
  } catch (err) {
    // The library's own checks ("clusters[0].name is missing"); a TypeError from inside it says nothing useful.
    const message = err instanceof TypeError ? 'malformed' : err instanceof Error ? err.message : String(err);
    return `not a kubeconfig: ${message.split('\n')[0]?.slice(0, 120)}`;
  }
  const cluster = loaded.getCurrentCluster();
  const user = loaded.getCurrentUser();
  if (!loaded.getCurrentContext() || !cluster) return 'no current context with a cluster';
  if (!cluster.server) return 'the current cluster has no server';
  let caData = cluster.caData;
  if (!caData && cluster.caFile) {
    try {
      caData = readFileSync(cluster.caFile).toString('base64');
    } catch (err) {
      return `certificate-authority ${cluster.caFile}: ${(err as NodeJS.ErrnoException).code ?? err}`;
    }
  }
  const memberCluster: MemberCluster = {
    server: cluster.server.replace(/\/+$/, ''),
    ...(caData ? { caData } : {}),
    ...(cluster.tlsServerName ? { tlsServerName: cluster.tlsServerName } : {}),
    ...(cluster.proxyUrl ? { proxyUrl: cluster.proxyUrl } : {}),
    ...(cluster.skipTLSVerify ? { insecureSkipTlsVerify: true } : {}),
  };
  let auth: MemberAuth = { kind: 'kubeconfig', endpoint: endpointFromKubeConfig(loaded) };
  if (user?.exec !== undefined && user.exec !== null) {
    // The gateway runs the plugin itself (timeout, 401 rerun, no secrets in errors): the user keeps its name only.
    let exec: ReturnType<typeof decodeExecConfig>;
    try {
      exec = decodeExecConfig(user.exec, 'users[].user.exec');
    } catch (err) {
      return err instanceof Error ? err.message : String(err);
    }
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromOptions({
      clusters: loaded.getClusters(),
      users: [{ name: user.name }],
      contexts: loaded.getContexts(),
      currentContext: loaded.getCurrentContext(),
    });
    auth = { kind: 'kubeconfig', endpoint: endpointFromKubeConfig(kubeConfig), exec };
  }
  return {
    key: file,
    fileName: basename(file).replace(ENDINGS, '') || basename(file),
    cluster: memberCluster,
    auth,
    connectionKey: createHash('sha256').update(text).digest('hex'),
  };
}
