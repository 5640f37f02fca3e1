import type { Environment } from '@marcbachmann/cel-js';
import { rewriteForCelJs } from './cel-rewrite.ts';
import { type FieldError, type FieldErrorReason, fieldError } from './field-errors.ts';
import { createCelEnvironment } from './k8s-cel-library.ts';
import type { ValidationRule } from './schema-types.ts';

type Program = (context: Record<string, unknown>) => unknown;

/** One `x-kubernetes-validations` entry, compiled; `program` is undefined when the rule did not compile. */
export interface CelRule {
  readonly rule: ValidationRule;
  readonly program: Program | undefined;
  readonly messageProgram: Program | undefined;
  /** Uses oldSelf: a transition rule, evaluated on updates only, where an old value correlates. */
  readonly transition: boolean;
  /** Why the rule cannot be evaluated (compile error), for the error every object of the kind then gets. */
  readonly unsupported: string | undefined;
}

export interface RuleProblem {
  readonly location: string;
  readonly rule: string;
  readonly error: string;
}

/** Compiles rules once per distinct expression; the same rule text in many CRDs is parsed once. */
export class RuleCompiler {
  readonly #env: Environment = createCelEnvironment();
  readonly #programs = new Map<string, Program | string>();
  readonly problems: RuleProblem[] = [];

  compile(rule: ValidationRule, location: string): CelRule {
    const program = this.#program(rule.rule);
    const message = rule.messageExpression === undefined ? undefined : this.#program(rule.messageExpression);
    const unsupported =
      typeof program === 'string'
        ? program
        : typeof message === 'string'
          ? `messageExpression: ${message}`
          : undefined;
    if (unsupported) this.problems.push({ location, rule: rule.rule, error: unsupported });
    return {
      rule,
      program: typeof program === 'string' ? undefined : program,
      messageProgram: typeof message === 'string' ? undefined : message,
      transition: /\boldSelf\b/.test(rule.rule),
      unsupported,
    };
  }

  #program(expression: string): Program | string {
    let program = this.#programs.get(expression);
    if (program !== undefined) return program;
    try {
      const parsed = this.#env.parse(rewriteForCelJs(expression));
      const checked = parsed.check();
      program = checked.valid ? (parsed as Program) : firstLine(checked.error);
    } catch (error) {
      program = firstLine(error);
    }
    this.#programs.set(expression, program);
    return program;
  }
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '';
}

/** Runs one rule on a value; returns the API server's error for a failed rule, or undefined. */
export function evaluateRule(
  rule: CelRule,
  path: string,
  schemaType: string,
  self: unknown,
  oldSelf: unknown,
): FieldError | undefined {
  const where = rule.rule.fieldPath ? joinFieldPath(path, rule.rule.fieldPath) : path;
  if (!rule.program) {
    return fieldError.invalid(
      where,
      schemaType,
      `rule is not supported: ${rule.unsupported}: ${rule.rule.rule}`,
    );
  }
  const context = rule.transition ? { self, oldSelf } : { self };
  let result: unknown;
  try {
    result = rule.program(context);
  } catch (error) {
    // kube-apiserver: "no such key: x evaluating rule: <message, or the rule when it has none>".
    const text = firstLine(error).replace(/^No such key/, 'no such key');
    return fieldError.invalid(where, schemaType, `${text} evaluating rule: ${ruleText(rule)}`);
  }
  if (result === true) return undefined;
  if (result !== false) {
    return fieldError.invalid(where, schemaType, `rule did not evaluate to a bool: ${rule.rule.rule}`);
  }
  return failure(rule, where, schemaType, messageOf(rule, context));
}

function ruleText(rule: CelRule): string {
  return (rule.rule.message ?? rule.rule.rule).trim();
}

function messageOf(rule: CelRule, context: Record<string, unknown>): string {
  if (rule.messageProgram) {
    try {
      const text = rule.messageProgram(context);
      if (typeof text === 'string' && text.trim() !== '' && !/[\r\n]/.test(text)) return text;
    } catch {
      // As kube-apiserver: a messageExpression that fails falls back to message.
    }
  }
  return rule.rule.message ?? `failed rule: ${rule.rule.rule}`;
}

function failure(rule: CelRule, field: string, schemaType: string, message: string): FieldError {
  const reason = (rule.rule.reason ?? 'FieldValueInvalid') as FieldErrorReason;
  if (reason === 'FieldValueForbidden') return fieldError.forbidden(field, message);
  if (reason === 'FieldValueRequired') return fieldError.required(field, message);
  if (reason === 'FieldValueDuplicate') return fieldError.duplicate(field, schemaType);
  return fieldError.invalid(field, schemaType, message);
}

/** fieldPath is relative to the rule's location: `.spec.host`, `['key']`, `[0]` become path parts. */
function joinFieldPath(path: string, fieldPath: string): string {
  const normalized = fieldPath.replace(/\['([^']*)'\]/g, '.$1');
  const joined = `${path}${normalized.startsWith('.') || normalized.startsWith('[') ? '' : '.'}${normalized}`;
  return joined.startsWith('.') ? joined.slice(1) : joined;
}
