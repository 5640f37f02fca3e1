import { isRecord } from '../../snapshot/json-object.ts';
import { ApiFailure, badRequest, methodNotAllowed, unsupportedMediaType } from './api-status.ts';
import { unknownFields } from './crd-admission.ts';
import { type JsonObject, metadataOf } from './json.ts';
import { applyJsonPatch, applyMergePatch } from './patch.ts';
import type { Route } from './request-route.ts';
import { groupVersion, RESOURCES } from './resources.ts';
import { parseFieldSelector, parseLabelSelector } from './selectors.ts';
import type { ObjectStore } from './store.ts';
import { dropFields, duplicateJsonFields, type FieldValidation, fieldValidationOf } from './validation.ts';
import type { WatchFilter } from './watch-events.ts';

/**
 * The verbs on a resource route as kube-apiserver answers them: list (pages, selectors), get, create, update,
 * patch (JSON, merge, apply; strategic merge on built-ins), delete (with preconditions; a Namespace takes its
 * objects along), with strict decoding of what is written. Watches are watch-stream.ts.
 */

const PATCH_TYPES = [
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/apply-patch+yaml',
];
const BUILTIN_PATCH_TYPES = [...PATCH_TYPES, 'application/strategic-merge-patch+json'];

/** Whether namespace `name` exists (objects are only created in one that does). */
export function namespaceExists(store: ObjectStore, name: string): boolean {
  const def = RESOURCES.find((r) => r.resource === 'namespaces' && r.group === '');
  return def !== undefined && store.namespaceExists(name, def);
}

export function dispatchVerb(
  store: ObjectStore,
  verb: string,
  route: Route,
  url: URL,
  body: string,
  contentType: string | undefined,
): [number, unknown, (readonly string[])?] {
  const { def, namespace, name } = route;
  const gv = groupVersion(def.group, route.version);
  const out = (obj: JsonObject): JsonObject => ({ ...obj, apiVersion: gv, kind: def.kind });
  if (route.subresource !== undefined && route.subresource !== 'status') throw notFoundError();
  if (route.subresource === 'status' && !def.status) throw notFoundError();
  switch (verb) {
    case 'list':
      return [200, listObjects(store, route, url)];
    case 'get':
      return [200, out(store.require(def, namespace, name as string))];
    case 'create': {
      const directive = fieldValidationOf(url, 'CreateOptions');
      const obj = parseJsonBody(body);
      checkTypeMeta(obj, gv, def.kind);
      obj.apiVersion = gv;
      obj.kind = def.kind;
      const warnings = strictDecoding(directive, obj, duplicateJsonFields(body), def.kind, route.version);
      return [201, out(store.create(def, namespace, obj, (n) => namespaceExists(store, n))), warnings];
    }
    case 'update': {
      const directive = fieldValidationOf(url, 'UpdateOptions');
      const obj = parseJsonBody(body);
      checkTypeMeta(obj, gv, def.kind);
      const typed = { ...obj, apiVersion: gv, kind: def.kind };
      const warnings = strictDecoding(directive, typed, duplicateJsonFields(body), def.kind, route.version);
      const { apiVersion: _a, kind: _k, ...fields } = typed;
      for (const key of Object.keys(obj))
        if (!(key in fields) && key !== 'apiVersion' && key !== 'kind') delete obj[key];
      return [
        200,
        out(
          store.update(
            def,
            namespace,
            name as string,
            obj,
            route.subresource === 'status' ? 'status' : undefined,
          ),
        ),
        warnings,
      ];
    }
    case 'patch': {
      const directive = fieldValidationOf(url, 'PatchOptions');
      const current = out(store.require(def, namespace, name as string));
      const accepted = def.crd ? PATCH_TYPES : BUILTIN_PATCH_TYPES;
      if (!contentType || !accepted.includes(contentType))
        throw unsupportedMediaType(contentType ?? '', accepted);
      let patched: unknown;
      if (contentType === 'application/json-patch+json') patched = applyJsonPatch(current, parseJson(body));
      else if (contentType === 'application/apply-patch+yaml') {
        if (!url.searchParams.get('fieldManager')) {
          throw new ApiFailure(
            422,
            'Invalid',
            'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch',
          );
        }
        // Server-side apply without field ownership: the applied configuration is merged in (JSON is valid YAML).
        patched = applyMergePatch(current, parseJson(body));
      } else {
        // Strategic merge on built-ins is approximated by a merge patch: the client here never relies on the
        // difference (list merge keys), and CRDs reject it with 415 as kube-apiserver does.
        patched = applyMergePatch(current, parseJson(body));
      }
      if (!isRecord(patched)) throw badRequest('patch result is not an object');
      // Repeated keys of a merge patch are the object's own paths; a JSON patch is a list of operations.
      const duplicates = contentType === 'application/json-patch+json' ? [] : duplicateJsonFields(body);
      const warnings = strictDecoding(directive, patched, duplicates, def.kind, route.version, true);
      return [
        200,
        out(
          store.update(
            def,
            namespace,
            name as string,
            patched,
            route.subresource === 'status' ? 'status' : undefined,
          ),
        ),
        warnings,
      ];
    }
    case 'delete': {
      const opts = body ? parseJson(body) : undefined;
      const preconditions = isRecord(opts) && isRecord(opts.preconditions) ? opts.preconditions : undefined;
      if (def.kind === 'Namespace') {
        for (const item of store.contents(RESOURCES, name as string)) {
          store.delete(item.def, name, item.name, undefined);
        }
      }
      return [200, out(store.delete(def, namespace, name as string, preconditions))];
    }
    default:
      throw methodNotAllowed(`the server does not allow this method on the requested resource (${verb})`);
  }
}

export function notFoundError(): ApiFailure {
  return new ApiFailure(404, 'NotFound', 'the server could not find the requested resource', {});
}

export function watchFilter(route: Route, url: URL): WatchFilter {
  const fields = parseFieldSelector(url.searchParams.get('fieldSelector'), [
    'metadata.name',
    'metadata.namespace',
    ...(route.def.fieldSelectors ?? []),
  ]);
  return {
    namespace: route.namespace,
    labels: parseLabelSelector(url.searchParams.get('labelSelector')),
    fields,
  };
}

function listObjects(store: ObjectStore, route: Route, url: URL): JsonObject {
  const { def } = route;
  const gv = groupVersion(def.group, route.version);
  const token = url.searchParams.get('continue');
  const start = token ? Buffer.from(token, 'base64').toString('utf8') : undefined;
  const limit = Number(url.searchParams.get('limit') ?? '0');
  const { items, remaining } = store.listPage(def, watchFilter(route, url), start, limit);
  const next =
    remaining > 0
      ? Buffer.from(itemKey(items[items.length - 1] as JsonObject)).toString('base64')
      : undefined;
  return {
    kind: `${def.kind}List`,
    apiVersion: gv,
    metadata: {
      resourceVersion: String(store.resourceVersion),
      ...(next ? { continue: next, remainingItemCount: remaining } : {}),
    },
    // Built-in lists carry items without kind/apiVersion; custom resource lists keep them.
    items: items.map((item) => {
      if (def.crd) return { ...item, apiVersion: gv, kind: def.kind };
      const { apiVersion: _a, kind: _k, ...rest } = item;
      return rest;
    }),
  };
}

/**
 * Strict decoding as kube-apiserver does it for a create, update or patch (KEP-2885): repeated keys and fields the
 * kind does not declare (its schema, or its Go struct and ObjectMeta) are dropped from `obj`; Strict refuses the
 * request (400 `cannot be handled as a <Kind>: strict decoding error: ...`, a 422 on `patch` for patches), Warn
 * returns them as warnings, Ignore says nothing.
 */
function strictDecoding(
  directive: FieldValidation,
  obj: JsonObject,
  duplicates: readonly string[],
  kind: string,
  version: string,
  patch = false,
): readonly string[] {
  const unknown = unknownFields(obj);
  if (directive === 'Strict' && (duplicates.length > 0 || unknown.length > 0)) {
    const problems = [
      ...duplicates.map((d) => `duplicate field "${d}"`),
      ...unknown.map((u) => `unknown field "${u}"`),
    ];
    const error = `strict decoding error: ${problems.join(', ')}`;
    if (patch) {
      const message = `Invalid value: ${JSON.stringify(JSON.stringify(obj))}: ${error}`;
      throw new ApiFailure(422, 'Invalid', ` "" is invalid: patch: ${message}`, {
        causes: [{ reason: 'FieldValueInvalid', message, field: 'patch' }],
      });
    }
    throw badRequest(`${kind} in version "${version}" cannot be handled as a ${kind}: ${error}`);
  }
  dropFields(obj, unknown);
  if (directive === 'Ignore') return [];
  return [...duplicates.map((d) => `duplicate field "${d}"`), ...unknown.map((u) => `unknown field "${u}"`)];
}

function itemKey(item: JsonObject): string {
  const meta = metadataOf(item);
  return meta.namespace ? `${String(meta.namespace)}/${String(meta.name)}` : String(meta.name);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw badRequest(`the body of the request could not be decoded: ${(err as Error).message}`);
  }
}

function parseJsonBody(text: string): JsonObject {
  const value = parseJson(text);
  if (!isRecord(value)) throw badRequest('the body of the request must be a JSON object');
  return value;
}

function checkTypeMeta(obj: JsonObject, gv: string, kind: string): void {
  if (obj.apiVersion !== undefined && obj.apiVersion !== gv) {
    throw badRequest(
      `the API version in the data (${String(obj.apiVersion)}) does not match the expected API version (${gv})`,
    );
  }
  if (obj.kind !== undefined && obj.kind !== kind) {
    throw badRequest(`the kind in the data (${String(obj.kind)}) does not match the expected kind (${kind})`);
  }
}
