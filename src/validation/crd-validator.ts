import { isRecord } from '../snapshot/json-object.ts';
import { BUILT_IN_KINDS, editDistance, groupOf } from './built-in-kinds.ts';
import { builtInObjectErrors, isLoopbackEndpointError } from './built-in-objects.ts';
import { builtInValueErrors } from './built-in-values.ts';
import { RuleCompiler, type RuleProblem } from './cel-rules.ts';
import { checkRules, NO_OLD_VALUE } from './cel-walk.ts';
import { compileSchema, type SchemaNode } from './compiled-schema.ts';
import { type CrdEntry, crdEntry } from './crd-entry.ts';
import { type FieldError, fieldError, summarize } from './field-errors.ts';
import { BUILT_IN_FIELDS, OBJECT_META, unknownFieldPaths } from './known-fields.ts';
import { objectMetaErrors } from './object-meta.ts';
import { pruneAndDefault } from './prune-and-default.ts';
import { checkSchema } from './schema-check.ts';
import type { CrdDocument, JsonObject } from './schema-types.ts';

export interface ValidationResult {
  /** The object as the API server would store it: pruned and defaulted (a copy; the input is untouched). */
  readonly object: JsonObject;
  readonly errors: readonly FieldError[];
  /**
   * Fields the schema does not declare, by path (`metadata.foo`, then `spec.rules[0].backendRef`): pruned from
   * `object`. With fieldValidation=Strict (kubectl's default) each refuses the object; with Warn each is a warning.
   * x-kubernetes-preserve-unknown-fields subtrees keep theirs and report none, as upstream.
   */
  readonly unknownFields: readonly string[];
  /** The same, worded as kube-apiserver's strict decoding warnings (`unknown field "spec.foo"`). */
  readonly warnings: readonly string[];
}

export interface ValidatorOptions {
  /**
   * Compile every kind at construction and throw when a rule does not compile (tests, CI). Otherwise each kind is
   * compiled when an object of it is first validated, and objects using a rule that does not compile are rejected.
   */
  readonly strict?: boolean;
  /** Told of the rules that do not compile, as each kind is compiled. */
  readonly onRuleProblems?: (problems: readonly RuleProblem[]) => void;
  /**
   * Accept EndpointSlice addresses in 127.0.0.0/8 and ::1, which kube-apiserver refuses: where backends are
   * processes on this machine (the file source).
   */
  readonly allowLoopbackEndpoints?: boolean;
}

interface KindSchema {
  readonly group: string;
  readonly kind: string;
  readonly version: string;
  readonly namespaced: boolean;
  readonly crd: CrdEntry;
  /** Compiled on first use. */
  root: SchemaNode | undefined;
}

/** API groups served by kube-apiserver itself: their kinds are not custom resources and not checked here. */
const BUILT_IN_GROUPS = new Set([
  '',
  'apps',
  'batch',
  'autoscaling',
  'policy',
  'discovery.k8s.io',
  'coordination.k8s.io',
  'events.k8s.io',
  'networking.k8s.io',
  'rbac.authorization.k8s.io',
  'apiextensions.k8s.io',
  'admissionregistration.k8s.io',
  'storage.k8s.io',
  'scheduling.k8s.io',
  'node.k8s.io',
  'certificates.k8s.io',
]);

const BLOCKING = new Set(['FieldValueTypeInvalid', 'FieldValueNotSupported']);

/**
 * Validates custom resources as kube-apiserver does with their CRDs: prune, default, OpenAPI schema, list
 * types, then the CEL rules (only when the schema found no type or enum error, as there). Each served version
 * of a CRD is compiled once, on its first object (or all at construction when strict); validate() then only walks.
 */
export class CrdValidator {
  readonly #kinds = new Map<string, KindSchema>();
  readonly #compiler = new RuleCompiler();
  readonly #onRuleProblems: ((problems: readonly RuleProblem[]) => void) | undefined;
  readonly #allowLoopbackEndpoints: boolean;

  constructor(crds: readonly (CrdDocument | CrdEntry)[], options: ValidatorOptions = {}) {
    this.#onRuleProblems = options.onRuleProblems;
    this.#allowLoopbackEndpoints = options.allowLoopbackEndpoints === true;
    for (const item of crds) {
      const crd = 'load' in item ? item : crdEntry(item);
      for (const version of crd.versions) {
        this.#kinds.set(`${crd.group}/${version}/${crd.kind}`, {
          group: crd.group,
          kind: crd.kind,
          version,
          namespaced: crd.scope === 'Namespaced',
          crd,
          root: undefined,
        });
      }
    }
    if (options.strict) {
      const problems = this.ruleProblems;
      if (problems.length > 0) {
        const list = problems.map((p) => `${p.location}: ${p.error}: ${p.rule}`).join('\n');
        throw new Error(`CEL rules that cannot be evaluated:\n${list}`);
      }
    }
  }

  /** The rules of every kind that do not compile (compiles every kind not compiled yet). */
  get ruleProblems(): readonly RuleProblem[] {
    for (const schema of this.#kinds.values()) this.#root(schema);
    return this.#compiler.problems;
  }

  #root(schema: KindSchema): SchemaNode {
    if (schema.root !== undefined) return schema.root;
    const version = schema.crd.load().spec.versions.find((v) => v.name === schema.version);
    const openApi = version?.schema?.openAPIV3Schema;
    if (openApi === undefined)
      throw new Error(`the CRD ${schema.crd.name} has no schema for ${schema.version}`);
    const before = this.#compiler.problems.length;
    schema.root = compileSchema(openApi, this.#compiler, `${schema.kind}.${schema.group}/${schema.version}`);
    const problems = this.#compiler.problems.slice(before);
    if (problems.length > 0) this.#onRuleProblems?.(problems);
    return schema.root;
  }

  /** Whether this apiVersion/kind is a custom resource with a CRD here (false for built-in kinds). */
  has(apiVersion: string, kind: string): boolean {
    return this.#kinds.has(`${groupVersion(apiVersion).join('/')}/${kind}`);
  }

  /** True for kinds of API groups the API server serves itself (Service, EndpointSlice, ...). */
  isBuiltIn(apiVersion: string): boolean {
    return BUILT_IN_GROUPS.has(groupVersion(apiVersion)[0]);
  }

  /**
   * Validates a create (no `old`) or an update. Unknown custom kinds and versions are errors, as `kubectl
   * apply` reports them; built-in kinds pass through unchanged.
   */
  validate(object: JsonObject, old?: JsonObject): ValidationResult {
    const apiVersion = typeof object.apiVersion === 'string' ? object.apiVersion : '';
    const kind = typeof object.kind === 'string' ? object.kind : '';
    const [group, version] = groupVersion(apiVersion);
    const schema = this.#kinds.get(`${group}/${version}/${kind}`);
    if (!schema) {
      const problem = this.kindProblem(apiVersion, kind);
      if (problem !== undefined) {
        const bad = problem.field === 'kind' ? kind : apiVersion;
        const errors = [fieldError.invalid(problem.field, bad, problem.message)];
        return { object, errors, unknownFields: [], warnings: [] };
      }
      const known = BUILT_IN_FIELDS.get(`${apiVersion}/${kind}`);
      // Kinds without a field table here (Lease, Event, ...) still have their ObjectMeta checked.
      const unknown = known
        ? unknownFieldPaths(known, object)
        : unknownFieldPaths(OBJECT_META, object.metadata, 'metadata');
      return {
        object: unknown.length > 0 ? prune(object, unknown) : object,
        errors: [
          ...objectMetaErrors(kind, object.metadata),
          ...builtInValueErrors(kind, object),
          ...builtInObjectErrors(kind, object, old).filter(
            (error) => !(this.#allowLoopbackEndpoints && isLoopbackEndpointError(error)),
          ),
        ],
        ...unknownOf(unknown),
      };
    }
    let root: SchemaNode;
    try {
      root = this.#root(schema);
    } catch (error) {
      const detail = `the CustomResourceDefinition cannot be read: ${(error as Error).message}`;
      return { object, errors: [fieldError.invalid('kind', kind, detail)], unknownFields: [], warnings: [] };
    }
    const { metadata, ...body } = object;
    const pruned: string[] = [];
    const copy = pruneAndDefault(root, body, '', pruned) as JsonObject;
    pruned.sort();
    const metaUnknown = metadata === undefined ? [] : unknownFieldPaths(OBJECT_META, metadata, 'metadata');
    const errors: FieldError[] = objectMetaErrors(kind, metadata);
    checkSchema(root, copy, '', errors);
    if (errors.some((e) => BLOCKING.has(e.reason))) {
      errors.push({
        reason: 'FieldValueInvalid',
        message:
          'Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
        field: '<nil>',
      });
    } else {
      // The old object is compared as stored: pruned and defaulted like the new one.
      const { metadata: _m, ...oldBody } = old ?? {};
      const oldCopy = old ? pruneAndDefault(root, oldBody, '', []) : NO_OLD_VALUE;
      checkRules(root, copy, undefined, oldCopy, undefined, '', errors);
    }
    const meta = metaUnknown.length > 0 ? prune({ metadata }, metaUnknown).metadata : metadata;
    const result = metadata === undefined ? copy : { ...copy, metadata: meta };
    return { object: reorder(result), errors, ...unknownOf([...metaUnknown, ...pruned]) };
  }

  /**
   * Why `kubectl apply` would not find this apiVersion/kind with these CRDs installed (`no matches for kind
   * "HTTPRoutes" in version "gateway.networking.k8s.io/v1"`), with a hint at what was probably meant; undefined for a
   * kind the API server serves, built-in or from a CRD here. `field` is the one to fix: the apiVersion when the
   * kind is served under another one, else the kind.
   */
  kindProblem(
    apiVersion: string,
    kind: string,
  ): { readonly field: 'kind' | 'apiVersion'; readonly message: string } | undefined {
    const [group, version] = groupVersion(apiVersion);
    if (this.#kinds.has(`${group}/${version}/${kind}`) || BUILT_IN_KINDS.get(apiVersion)?.has(kind))
      return undefined;
    const hint = this.#hint(group, kind);
    return {
      field: hint.startsWith(` (${kind} is served`) ? 'apiVersion' : 'kind',
      message: `no matches for kind "${kind}" in version "${apiVersion}"${hint}`,
    };
  }

  #hint(group: string, kind: string): string {
    const served = [...this.#kinds.values()].map((k) => ({
      apiVersion: k.group ? `${k.group}/${k.version}` : k.version,
      group: k.group,
      kind: k.kind,
    }));
    for (const [apiVersion, kinds] of BUILT_IN_KINDS)
      for (const k of kinds) served.push({ apiVersion, group: groupOf(apiVersion), kind: k });
    const sameKind = served.filter((s) => s.kind === kind).map((s) => s.apiVersion);
    if (sameKind.length > 0) return ` (${kind} is served as apiVersion ${sameKind.join(', ')})`;
    const inGroup = served.filter((s) => s.group === group);
    if (inGroup.length === 0) return ` (no CustomResourceDefinition here serves the group "${group}")`;
    const lower = kind.toLowerCase();
    const close = [...new Set(inGroup.map((s) => s.kind))]
      .map((k) => ({ k, d: k.toLowerCase() === lower ? 0 : editDistance(k.toLowerCase(), lower) }))
      .filter((c) => c.d <= 2)
      .sort((a, b) => a.d - b.d);
    return close[0] ? ` (did you mean kind "${close[0].k}"?)` : '';
  }
}

function unknownOf(paths: readonly string[]): Pick<ValidationResult, 'unknownFields' | 'warnings'> {
  return { unknownFields: paths, warnings: paths.map((p) => `unknown field "${p}"`) };
}

/** A copy of `object` without the fields at `paths` (paths of unknownFieldPaths: properties and list indexes). */
function prune(object: JsonObject, paths: readonly string[]): JsonObject {
  const copy = structuredClone(object);
  for (const path of paths) {
    const parts = path.match(/[^.[\]]+/g) ?? [];
    let node: unknown = copy;
    for (const part of parts.slice(0, -1)) node = (node as Record<string, unknown> | undefined)?.[part];
    if (isRecord(node)) delete node[parts.at(-1) as string];
  }
  return copy;
}

/** apiVersion, kind and metadata first, as they were written. */
function reorder(result: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const key of ['apiVersion', 'kind', 'metadata']) if (key in result) out[key] = result[key];
  for (const [key, value] of Object.entries(result)) if (!(key in out)) out[key] = value;
  return out;
}

function groupVersion(apiVersion: string): [string, string] {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? ['', apiVersion] : [apiVersion.slice(0, slash), apiVersion.slice(slash + 1)];
}

/** `HTTPRoute.gateway.networking.k8s.io "name" is invalid: ...`, the Status message of a 422. */
export function invalidMessage(object: JsonObject, errors: readonly FieldError[]): string {
  const [group] = groupVersion(typeof object.apiVersion === 'string' ? object.apiVersion : '');
  const kind = `${String(object.kind)}${group ? `.${group}` : ''}`;
  const name = isRecord(object.metadata) ? String(object.metadata.name ?? '') : '';
  return `${kind} "${name}" is invalid: ${summarize(errors)}`;
}
