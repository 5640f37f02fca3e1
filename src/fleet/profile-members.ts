import type { ExecClusterInfo, ExecConfig } from '../kube/exec-credential.ts';
import { isRecord } from '../snapshot/json-object.ts';
import type { ClusterProfile } from '../snapshot/mcs-resources.ts';
import { compareStrings } from '../snapshot/object-order.ts';
import type { MemberOrigin } from './member-view.ts';
import { execForProfile } from './profile-exec.ts';
import type { AccessProvider } from './provider-file.ts';

/** How to reach a member's API server: a kubeconfig `cluster`, minus file references. */
export interface MemberCluster {
  readonly server: string;
  /** Base64 PEM, as `certificate-authority-data`. */
  readonly caData?: string;
  readonly tlsServerName?: string;
  readonly proxyUrl?: string;
  readonly insecureSkipTlsVerify?: boolean;
  /** The `client.authentication.k8s.io/exec` extension, handed to the exec plugin in KUBERNETES_EXEC_INFO. */
  readonly execExtension?: unknown;
}

/** A member found by a ClusterProfile: where it is and which plugin gives its credentials. */
export interface ProfileMember {
  /** `namespace/name` of the profile: the member's key until its ClusterProperty names it. */
  readonly key: string;
  readonly profileName: string;
  readonly origin: Extract<MemberOrigin, { kind: 'ClusterProfile' }>;
  readonly cluster: MemberCluster;
  readonly exec: ExecConfig;
  /** `status.properties` by name. */
  readonly properties: Readonly<Record<string, string>>;
  /** `ControlPlaneHealthy=False` with its reason/message; undefined when healthy or not reported. */
  readonly unhealthy?: string;
  /** Changes when anything that needs a new connection (server, CA, plugin) changes. */
  readonly connectionKey: string;
}

export interface ProfileMembers {
  readonly members: readonly ProfileMember[];
  /** Profiles that could not be used, for /config_dump and a log line: `namespace/name: why`. */
  readonly problems: readonly string[];
}

const EXEC_EXTENSION = 'client.authentication.k8s.io/exec';

/**
 * ClusterProfiles to members (pure): a profile is a member when one of its `status.accessProviders[]` (or the
 * deprecated `status.credentialProviders[]`) is named like a configured provider; the first such entry, in the
 * profile's order, is used. Profiles are read in `namespace/name` order so the result does not depend on the
 * source's.
 */
export function membersFromProfiles(
  profiles: readonly ClusterProfile[],
  providers: ReadonlyMap<string, AccessProvider>,
): ProfileMembers {
  const members: ProfileMember[] = [];
  const problems: string[] = [];
  const sorted = [...profiles].sort((a, b) => compareStrings(keyOf(a), keyOf(b)));
  for (const profile of sorted) {
    const key = keyOf(profile);
    const status = record((profile as { status?: unknown }).status);
    const entries = [...list(status.accessProviders), ...list(status.credentialProviders)];
    if (entries.length === 0) {
      problems.push(`ClusterProfile ${key}: no status.accessProviders yet`);
      continue;
    }
    const entry = entries.find((e) => typeof e.name === 'string' && providers.has(e.name));
    if (!entry) {
      const names = entries.map((e) => String(e.name)).join(', ');
      problems.push(
        `ClusterProfile ${key}: no access provider matches --clusterprofile-provider-file (it offers: ${names})`,
      );
      continue;
    }
    const provider = String(entry.name);
    const cluster = decodeCluster(record(entry.cluster));
    if (typeof cluster === 'string') {
      problems.push(`ClusterProfile ${key}: access provider ${provider}: ${cluster}`);
      continue;
    }
    const exec = execForProfile(
      providers.get(provider) as AccessProvider,
      list(record(entry.cluster).extensions),
    );
    if (typeof exec === 'string') {
      problems.push(`ClusterProfile ${key}: access provider ${provider}: cluster.${exec}`);
      continue;
    }
    const { namespace = '', name } = profile.metadata;
    members.push({
      key,
      profileName: name,
      origin: { kind: 'ClusterProfile', namespace, name, provider },
      cluster,
      exec,
      properties: propertiesOf(status.properties),
      ...unhealthyOf(status.conditions),
      // The profile's extensions may add to the plugin's command line: a change there is a new connection too.
      connectionKey: JSON.stringify([provider, cluster, exec.args, exec.env]),
    });
  }
  return { members, problems };
}

/** What the exec plugin is told about the cluster (`spec.cluster` of KUBERNETES_EXEC_INFO). */
export function execClusterInfo(cluster: MemberCluster): ExecClusterInfo {
  return {
    server: cluster.server,
    ...(cluster.caData ? { 'certificate-authority-data': cluster.caData } : {}),
    ...(cluster.tlsServerName ? { 'tls-server-name': cluster.tlsServerName } : {}),
    ...(cluster.insecureSkipTlsVerify ? { 'insecure-skip-tls-verify': true } : {}),
    ...(cluster.proxyUrl ? { 'proxy-url': cluster.proxyUrl } : {}),
    ...(cluster.execExtension !== undefined ? { config: cluster.execExtension } : {}),
  };
}

function decodeCluster(cluster: Record<string, unknown>): MemberCluster | string {
  const server = cluster.server;
  if (typeof server !== 'string' || server === '') return 'cluster.server is missing';
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    return 'cluster.server is not a URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'cluster.server must be an https URL';
  if (url.username || url.password) return 'cluster.server must not carry credentials';
  // The API client refuses plain http unless TLS checks are off: say so here, not as a connection that never is.
  if (url.protocol === 'http:' && cluster['insecure-skip-tls-verify'] !== true)
    return 'cluster.server is plain http: members are reached over https (http only with insecure-skip-tls-verify: true, for tests)';
  const text = (field: string): string | undefined =>
    typeof cluster[field] === 'string' && cluster[field] !== '' ? (cluster[field] as string) : undefined;
  const caData = text('certificate-authority-data');
  const tlsServerName = text('tls-server-name');
  const proxyUrl = text('proxy-url');
  const extension = list(cluster.extensions).find((e) => e.name === EXEC_EXTENSION)?.extension;
  return {
    server: server.replace(/\/+$/, ''),
    ...(caData ? { caData } : {}),
    ...(tlsServerName ? { tlsServerName } : {}),
    ...(proxyUrl ? { proxyUrl } : {}),
    ...(cluster['insecure-skip-tls-verify'] === true ? { insecureSkipTlsVerify: true } : {}),
    ...(extension !== undefined ? { execExtension: extension } : {}),
  };
}

function propertiesOf(value: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of list(value)) {
    if (typeof p.name === 'string' && typeof p.value === 'string') out[p.name] = p.value;
  }
  return out;
}

function unhealthyOf(value: unknown): { unhealthy?: string } {
  const condition = list(value).find((c) => c.type === 'ControlPlaneHealthy');
  if (condition?.status !== 'False') return {};
  const why = [condition.reason, condition.message].filter((s) => typeof s === 'string' && s).join(': ');
  return { unhealthy: `ClusterProfile reports ControlPlaneHealthy=False${why ? ` (${why})` : ''}` };
}

function keyOf(profile: ClusterProfile): string {
  return `${profile.metadata.namespace ?? ''}/${profile.metadata.name}`;
}

function record(value: unknown): Record<string, unknown> {
  return isRecord(value) ? value : {};
}

function list(value: unknown): Record<string, unknown>[] {
  return Array.isArray(value) ? value.map(record) : [];
}
