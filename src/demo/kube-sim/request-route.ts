import {
  apiGroup,
  apiGroupList,
  apiResourceList,
  apiVersions,
  openApiV3GroupVersion,
  openApiV3Root,
  type ServedResource,
} from './discovery.ts';
import type { ResourceDef } from './resources.ts';

/**
 * What a request path names: a discovery document (version, health, OpenAPI v3, API groups and resource lists),
 * or a resource route (group, version, namespace, name, subresource) and the verb the method makes of it.
 * Pure; the server (server.ts) serves what this finds.
 */

export interface Route {
  readonly def: ResourceDef;
  readonly version: string;
  readonly namespace: string | undefined;
  readonly name: string | undefined;
  readonly subresource: string | undefined;
}

/** `null`: not a discovery path; `undefined`: a discovery path for something not served (404). */
export function discoveryDocument(
  segments: readonly string[],
  served: readonly ServedResource[],
): Record<string, unknown> | undefined | null {
  const [root, a, b, c] = segments;
  if (root === 'version' && segments.length === 1) {
    return { major: '1', minor: '33', gitVersion: 'v1.33.0', platform: 'linux/amd64' };
  }
  if ((root === 'healthz' || root === 'readyz' || root === 'livez') && segments.length === 1)
    return { status: 'ok' };
  if (root === 'openapi' && a === 'v3') {
    if (segments.length === 2) return openApiV3Root(served);
    if (b === 'api' && segments.length === 4 && c) return openApiV3GroupVersion(served, '', c);
    const [, , , group, version] = segments;
    if (b === 'apis' && segments.length === 5 && group && version)
      return openApiV3GroupVersion(served, group, version);
    return undefined;
  }
  if (root === 'api') {
    if (segments.length === 1) return apiVersions();
    if (segments.length === 2)
      return a === 'v1' ? (apiResourceList(served, '', 'v1') ?? undefined) : undefined;
    return null;
  }
  if (root === 'apis') {
    if (segments.length === 1) return apiGroupList(served);
    if (segments.length === 2 && a) return apiGroup(served, a);
    if (segments.length === 3 && a && b && c === undefined) return apiResourceList(served, a, b);
  }
  return null;
}

export function routeOf(segments: readonly string[], served: readonly ServedResource[]): Route | undefined {
  let group: string;
  let version: string | undefined;
  let rest: readonly string[];
  if (segments[0] === 'api') {
    group = '';
    version = segments[1];
    rest = segments.slice(2);
  } else if (segments[0] === 'apis') {
    group = segments[1] ?? '';
    version = segments[2];
    rest = segments.slice(3);
  } else return undefined;
  if (!version) return undefined;
  const find = (resource: string | undefined): ResourceDef | undefined =>
    served.find((s) => s.def.group === group && s.def.resource === resource && s.versions.includes(version))
      ?.def;

  // /namespaces/{ns}/{resource}[/{name}[/{sub}]] for namespaced resources.
  if (
    rest[0] === 'namespaces' &&
    rest.length >= 3 &&
    !(rest.length === 3 && (rest[2] === 'status' || rest[2] === 'finalize'))
  ) {
    const def = find(rest[2]);
    if (!def?.namespaced || rest.length > 5) return undefined;
    return { def, version, namespace: rest[1], name: rest[3], subresource: rest[4] };
  }
  const def = find(rest[0]);
  if (!def || rest.length > 3) return undefined;
  if (def.namespaced && rest.length > 1) return undefined;
  return { def, version, namespace: undefined, name: rest[1], subresource: rest[2] };
}

export function verbOf(method: string, route: Route, url: URL): string {
  const watch = url.searchParams.get('watch');
  switch (method) {
    case 'GET':
      if (route.name === undefined) return watch === 'true' || watch === '1' ? 'watch' : 'list';
      return 'get';
    case 'POST':
      return route.name === undefined ? 'create' : 'unsupported';
    case 'PUT':
      return route.name === undefined ? 'unsupported' : 'update';
    case 'PATCH':
      return route.name === undefined ? 'unsupported' : 'patch';
    case 'DELETE':
      return route.name === undefined ? 'deletecollection' : 'delete';
    default:
      return 'unsupported';
  }
}
