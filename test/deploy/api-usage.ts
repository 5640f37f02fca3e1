import type { Permission } from './rbac.ts';

/**
 * A cheap, honest look at which Kubernetes API calls the code makes, read from its source text:
 * - request paths (`/api/v1/...`, `/apis/<group>/<version>/...`), as informers and raw requests use them;
 * - typed `@kubernetes/client-node` methods (`listNamespacedLease`, `createNamespacedEvent`, ...).
 * Paths say which resource, not which verb: a collection path means list+watch, a `/status` path means a
 * status write (update or patch), any other path a read. Methods of a kind not in the table below are reported
 * as unknown, so a new call cannot slip past the RBAC check unseen.
 */
export interface ApiUse {
  readonly group: string;
  readonly resource: string;
  /** Any one of these verbs is what the call needs (a status write may be update or patch). */
  readonly verbs: readonly string[];
  readonly evidence: string;
}

/** Typed client-node kinds, by the name used in method names, to their API group and resource. */
const TYPED_KINDS: Readonly<Record<string, { group: string; resource: string }>> = {
  Lease: { group: 'coordination.k8s.io', resource: 'leases' },
  Event: { group: '', resource: 'events' },
  Service: { group: '', resource: 'services' },
  Namespace: { group: '', resource: 'namespaces' },
  Secret: { group: '', resource: 'secrets' },
  EndpointSlice: { group: 'discovery.k8s.io', resource: 'endpointslices' },
};

const METHOD_VERB: Readonly<Record<string, string>> = {
  list: 'list',
  watch: 'watch',
  read: 'get',
  create: 'create',
  replace: 'update',
  patch: 'patch',
  delete: 'delete',
  deleteCollection: 'deletecollection',
};

const PATH =
  /['"`/](?:api\/v1|apis\/([a-z0-9.-]+)\/(?:v[0-9a-z]+|\$\{[^}]*\}))(?:\/namespaces\/(?:\$\{[^}]*\}|[a-z0-9-]+))?\/([a-z]+)(\/(?:\$\{[^}]*\}|[a-z0-9.-]+))?(\/status)?/g;

const METHOD =
  /\.(list|watch|read|create|replace|patch|delete|deleteCollection)(?:Namespaced)?([A-Z][A-Za-z]*?)(Status)?(?:ForAllNamespaces)?\s*\(/g;

export function scanApiUse(source: string, file: string): { uses: ApiUse[]; unknown: string[] } {
  const uses: ApiUse[] = [];
  const unknown: string[] = [];
  for (const m of source.matchAll(PATH)) {
    const [text, group = '', resource = '', name, status] = m;
    const use =
      status !== undefined
        ? { resource: `${resource}/status`, verbs: ['update', 'patch'] }
        : { resource, verbs: name === undefined ? ['list', 'watch'] : ['get'] };
    for (const verbs of status !== undefined ? [use.verbs] : use.verbs.map((v) => [v])) {
      uses.push({ group, resource: use.resource, verbs, evidence: `${file}: ${text}` });
    }
  }
  for (const m of source.matchAll(METHOD)) {
    const [text, method = '', kind = '', status] = m;
    if (kind === 'CustomObject' || kind === '') continue; // group and plural are arguments; paths cover them
    const target = TYPED_KINDS[kind];
    if (target === undefined) {
      unknown.push(`${file}: ${text}`);
      continue;
    }
    uses.push({
      group: target.group,
      resource: status !== undefined ? `${target.resource}/status` : target.resource,
      verbs: [METHOD_VERB[method] ?? method],
      evidence: `${file}: ${text}`,
    });
  }
  return { uses, unknown };
}

export function asPermissions(use: ApiUse): Permission[] {
  return use.verbs.map((verb) => ({ group: use.group, resource: use.resource, verb }));
}
