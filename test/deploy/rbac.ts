import type { BuiltObject } from './kustomize.ts';
import { at, isObject, type Json, type JsonObject, list, str } from './manifests.ts';

/** One permission: `resource` may carry a subresource (`gateways/status`). */
export interface Permission {
  readonly group: string;
  readonly resource: string;
  readonly verb: string;
}

export interface Grants {
  /** Granted everywhere (ClusterRole bound by a ClusterRoleBinding). */
  readonly cluster: readonly Permission[];
  /** Granted in one namespace (Role bound by a RoleBinding), by namespace. */
  readonly namespaced: ReadonlyMap<string, readonly Permission[]>;
}

function expand(rules: Json | undefined): Permission[] {
  const out: Permission[] = [];
  for (const rule of list(rules)) {
    for (const group of list(at(rule, 'apiGroups'))) {
      for (const resource of list(at(rule, 'resources'))) {
        for (const verb of list(at(rule, 'verbs'))) {
          out.push({ group: String(group), resource: String(resource), verb: String(verb) });
        }
      }
    }
  }
  return out;
}

/** What `serviceAccount` in `namespace` is granted by the RBAC objects among `objects`. */
export function grantsFor(
  objects: readonly BuiltObject[],
  namespace: string,
  serviceAccount: string,
): Grants {
  const find = (kind: string, name: string, ns?: string): JsonObject | undefined =>
    objects
      .map((o) => o.object)
      .find(
        (o) =>
          o['kind'] === kind &&
          at(o, 'metadata', 'name') === name &&
          (ns === undefined || at(o, 'metadata', 'namespace') === ns),
      );
  const boundTo = (binding: JsonObject): boolean =>
    list(binding['subjects']).some(
      (s) =>
        isObject(s) &&
        s['kind'] === 'ServiceAccount' &&
        s['name'] === serviceAccount &&
        s['namespace'] === namespace,
    );
  const cluster: Permission[] = [];
  const namespaced = new Map<string, Permission[]>();
  for (const { object } of objects) {
    if (!boundTo(object)) continue;
    const roleKind = str(at(object, 'roleRef', 'kind'));
    const roleName = str(at(object, 'roleRef', 'name')) ?? '';
    if (object['kind'] === 'ClusterRoleBinding' && roleKind === 'ClusterRole') {
      cluster.push(...expand(find('ClusterRole', roleName)?.['rules']));
    } else if (object['kind'] === 'RoleBinding') {
      const ns = str(at(object, 'metadata', 'namespace')) ?? '';
      const role = roleKind === 'ClusterRole' ? find('ClusterRole', roleName) : find('Role', roleName, ns);
      namespaced.set(ns, [...(namespaced.get(ns) ?? []), ...expand(role?.['rules'])]);
    }
  }
  return { cluster, namespaced };
}

export function allows(granted: readonly Permission[], wanted: Permission): boolean {
  return granted.some(
    (g) =>
      (g.group === wanted.group || g.group === '*') &&
      (g.resource === wanted.resource || g.resource === '*') &&
      (g.verb === wanted.verb || g.verb === '*'),
  );
}
