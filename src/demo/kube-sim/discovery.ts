import { groupVersion, type ResourceDef, VERBS } from './resources.ts';

/** Classic (non-aggregated) discovery documents: what client-node's KubernetesObjectApi and our source read. */

export interface ServedResource {
  readonly def: ResourceDef;
  readonly versions: readonly string[];
}

export function apiVersions(): Record<string, unknown> {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: '127.0.0.1' }],
  };
}

function groupVersions(served: readonly ServedResource[], group: string): string[] {
  const versions: string[] = [];
  for (const s of served) {
    if (s.def.group !== group) continue;
    for (const v of s.versions) if (!versions.includes(v)) versions.push(v);
  }
  // kube-apiserver orders by version priority: GA > beta > alpha, newer first.
  return versions.sort((a, b) => versionPriority(b) - versionPriority(a));
}

function versionPriority(version: string): number {
  const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(version);
  if (!m) return 0;
  const major = Number(m[1]);
  const stage = m[2] === 'alpha' ? 0 : m[2] === 'beta' ? 1 : 2;
  return stage * 10000 + major * 100 + Number(m[3] ?? 0);
}

export function apiGroup(
  served: readonly ServedResource[],
  group: string,
): Record<string, unknown> | undefined {
  const versions = groupVersions(served, group);
  const preferred = versions[0];
  if (!preferred) return undefined;
  return {
    kind: 'APIGroup',
    apiVersion: 'v1',
    name: group,
    versions: versions.map((v) => ({ groupVersion: groupVersion(group, v), version: v })),
    preferredVersion: { groupVersion: groupVersion(group, preferred), version: preferred },
  };
}

export function apiGroupList(served: readonly ServedResource[]): Record<string, unknown> {
  const groups: string[] = [];
  for (const s of served) if (s.def.group && !groups.includes(s.def.group)) groups.push(s.def.group);
  return {
    kind: 'APIGroupList',
    apiVersion: 'v1',
    groups: groups.map((g) => {
      const { kind: _k, apiVersion: _a, ...rest } = apiGroup(served, g) ?? {};
      return rest;
    }),
  };
}

export function apiResourceList(
  served: readonly ServedResource[],
  group: string,
  version: string,
): Record<string, unknown> | undefined {
  const resources = served.filter((s) => s.def.group === group && s.versions.includes(version));
  if (resources.length === 0) return undefined;
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: groupVersion(group, version),
    resources: resources.flatMap(({ def }) => [
      {
        name: def.resource,
        singularName: def.singular,
        namespaced: def.namespaced,
        kind: def.kind,
        verbs: VERBS,
        ...(def.shortNames ? { shortNames: def.shortNames } : {}),
        storageVersionHash: Buffer.from(`${def.group}/${def.resource}`).toString('base64').slice(0, 11),
      },
      ...(def.status
        ? [
            {
              name: `${def.resource}/status`,
              singularName: '',
              namespaced: def.namespaced,
              kind: def.kind,
              verbs: ['get', 'patch', 'update'],
            },
          ]
        : []),
    ]),
  };
}

/**
 * OpenAPI v3 discovery, only as far as kubectl reads it before `create`/`apply`: each group version's document
 * lists, per resource, a PATCH operation tagged with its group-version-kind and the `fieldValidation` query
 * parameter, so kubectl leaves validation to the server (which refuses unknown and duplicate fields as
 * kube-apiserver does) instead of downloading schemas.
 */
export function openApiV3Root(served: readonly ServedResource[]): Record<string, unknown> {
  const paths: Record<string, { serverRelativeURL: string }> = {};
  for (const { def, versions } of served) {
    for (const version of versions) {
      const path = openApiGroupVersionPath(def.group, version);
      paths[path] = { serverRelativeURL: `/openapi/v3/${path}` };
    }
  }
  return { paths };
}

export function openApiV3GroupVersion(
  served: readonly ServedResource[],
  group: string,
  version: string,
): Record<string, unknown> | undefined {
  const resources = served.filter((s) => s.def.group === group && s.versions.includes(version));
  if (resources.length === 0) return undefined;
  const base = `/${openApiGroupVersionPath(group, version)}`;
  const paths: Record<string, unknown> = {};
  for (const { def } of resources) {
    const collection = def.namespaced
      ? `${base}/namespaces/{namespace}/${def.resource}`
      : `${base}/${def.resource}`;
    paths[`${collection}/{name}`] = {
      patch: {
        'x-kubernetes-group-version-kind': { group, version, kind: def.kind },
        parameters: [{ name: 'fieldValidation', in: 'query', schema: { type: 'string', uniqueItems: true } }],
        responses: {},
      },
    };
  }
  return { openapi: '3.0.0', info: { title: 'Kubernetes', version: 'v1.33.0' }, paths };
}

function openApiGroupVersionPath(group: string, version: string): string {
  return group === '' ? `api/${version}` : `apis/${group}/${version}`;
}
