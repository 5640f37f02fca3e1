import { isRecord } from '../snapshot/json-object.ts';
import type { ResourceKind } from '../snapshot/resources.ts';
import { groupVersionPath, type KubeApiClient, KubeApiError } from './api-client.ts';
import type { WatchedKind } from './resource-kinds.ts';

export interface ResolvedKind<K extends string = ResourceKind> {
  readonly watched: WatchedKind<K>;
  readonly version: string;
}

export interface DiscoveryResult<K extends string = ResourceKind> {
  readonly resolved: readonly ResolvedKind<K>[];
  /** Kinds whose group or resource the server does not serve (CRD not installed). */
  readonly missing: readonly WatchedKind<K>[];
}

/**
 * Finds which of the watched kinds the API server serves, and at which version, from the classic discovery
 * documents (`/apis`, `/apis/<group>/<version>`, `/api/v1`).
 */
export async function discoverKinds<K extends string = ResourceKind>(
  client: KubeApiClient,
  kinds: readonly WatchedKind<K>[],
): Promise<DiscoveryResult<K>> {
  const groups = await servedGroups(client);
  const resourceLists = new Map<string, Promise<Set<string> | undefined>>();
  const resourcesOf = (group: string, version: string): Promise<Set<string> | undefined> => {
    const key = `${group}/${version}`;
    let list = resourceLists.get(key);
    if (!list) {
      list = servedResources(client, group, version);
      resourceLists.set(key, list);
    }
    return list;
  };
  const resolved: ResolvedKind<K>[] = [];
  const missing: WatchedKind<K>[] = [];
  for (const watched of kinds) {
    const served = groups.get(watched.group);
    let found: string | undefined;
    if (served) {
      const candidates =
        watched.versions.length > 0 ? watched.versions.filter((v) => served.includes(v)) : served.slice(0, 1);
      for (const version of candidates) {
        const resources = await resourcesOf(watched.group, version);
        if (resources?.has(`${watched.plural}/${watched.kind}`)) {
          found = version;
          break;
        }
      }
    }
    if (found) resolved.push({ watched, version: found });
    else missing.push(watched);
  }
  return { resolved, missing };
}

/** Group name to served versions, the preferred one first. The core group is always there. */
async function servedGroups(client: KubeApiClient): Promise<Map<string, string[]>> {
  const groups = new Map<string, string[]>([['', ['v1']]]);
  const doc = await client.request('GET', '/apis');
  if (!isRecord(doc) || !Array.isArray(doc.groups)) return groups;
  for (const g of doc.groups) {
    if (!isRecord(g) || typeof g.name !== 'string' || !Array.isArray(g.versions)) continue;
    const versions = g.versions.flatMap((v) =>
      isRecord(v) && typeof v.version === 'string' ? [v.version] : [],
    );
    const preferred =
      isRecord(g.preferredVersion) && typeof g.preferredVersion.version === 'string'
        ? g.preferredVersion.version
        : undefined;
    if (preferred) versions.sort((a, b) => (a === preferred ? -1 : b === preferred ? 1 : 0));
    groups.set(g.name, versions);
  }
  return groups;
}

/** `plural/Kind` of every top-level resource at a group version; undefined when the version is not served. */
async function servedResources(
  client: KubeApiClient,
  group: string,
  version: string,
): Promise<Set<string> | undefined> {
  let doc: unknown;
  try {
    doc = await client.request('GET', groupVersionPath(group, version));
  } catch (err) {
    if (err instanceof KubeApiError && err.statusCode === 404) return undefined;
    throw err;
  }
  const out = new Set<string>();
  if (!isRecord(doc) || !Array.isArray(doc.resources)) return out;
  for (const r of doc.resources) {
    if (isRecord(r) && typeof r.name === 'string' && !r.name.includes('/') && typeof r.kind === 'string') {
      out.add(`${r.name}/${r.kind}`);
    }
  }
  return out;
}
