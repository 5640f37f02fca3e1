import { RuleCompiler, type RuleProblem } from './cel-rules.ts';
import { checkRules, NO_OLD_VALUE } from './cel-walk.ts';
import { compileSchema, type SchemaNode } from './compiled-schema.ts';
import { type CrdEntry, crdEntry } from './crd-entry.ts';
import { type FieldError, fieldError, summarize } from './field-errors.ts';
import { pruneAndDefault } from './prune-and-default.ts';
import { checkSchema } from './schema-check.ts';
import { type CrdDocument, isJsonObject, type JsonObject } from './schema-types.ts';

export interface ValidationResult {
  /** The object as the API server would store it: pruned and defaulted (a copy; the input is untouched). */
  readonly object: JsonObject;
  readonly errors: readonly FieldError[];
  /** Fields dropped by pruning, worded as kube-apiserver's warnings (`unknown field "spec.foo"`). */
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

  constructor(crds: readonly (CrdDocument | CrdEntry)[], options: ValidatorOptions = {}) {
    this.#onRuleProblems = options.onRuleProblems;
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
      if (BUILT_IN_GROUPS.has(group)) return { object, errors: [], warnings: [] };
      const known = [...this.#kinds.values()].some((k) => k.group === group && k.kind === kind);
      const detail = known
        ? `no matches for kind "${kind}" in version "${apiVersion}" (the CRD does not serve this version)`
        : `no matches for kind "${kind}" in version "${apiVersion}" (no CustomResourceDefinition for it)`;
      return { object, errors: [fieldError.invalid('kind', kind, detail)], warnings: [] };
    }
    let root: SchemaNode;
    try {
      root = this.#root(schema);
    } catch (error) {
      const detail = `the CustomResourceDefinition cannot be read: ${(error as Error).message}`;
      return { object, errors: [fieldError.invalid('kind', kind, detail)], warnings: [] };
    }
    const { metadata, ...body } = object;
    const pruned: string[] = [];
    const copy = pruneAndDefault(root, body, '', pruned) as JsonObject;
    const errors: FieldError[] = [];
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
    const result = metadata === undefined ? copy : { ...copy, metadata };
    return { object: reorder(result), errors, warnings: pruned.map((p) => `unknown field "${p}"`) };
  }
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
  const name = isJsonObject(object.metadata) ? String(object.metadata.name ?? '') : '';
  return `${kind} "${name}" is invalid: ${summarize(errors)}`;
}
