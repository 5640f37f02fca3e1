import { createRequire } from 'node:module';
import type * as Re2js from 're2js';

/**
 * A compiled whole-string regular expression in the RE2 dialect (linear time in the input: no backtracking,
 * so no pattern and no request can stall the event loop). RE2 rejects backreferences and lookaround.
 */
export interface LinearRegex {
  /** True when the whole of `value` matches (Gateway API regex matches are anchored at both ends). */
  test(value: string): boolean;
}

export type RegexCompileResult =
  | { readonly ok: true; readonly regex: LinearRegex }
  | { readonly ok: false; readonly message: string };

/** Compiles `source` with RE2 semantics; never throws. */
export function compileLinearRegex(source: string): RegexCompileResult {
  try {
    const pattern = re2().compile(source);
    return { ok: true, regex: { test: (value) => pattern.matches(value) } };
  } catch (err) {
    return { ok: false, message: (err as Error).message };
  }
}

/**
 * re2js, loaded when the first regular expression is compiled (its CommonJS build, so synchronously): a
 * configuration without RegularExpression matches never pays for its 250 KiB of code.
 */
function re2(): typeof Re2js.RE2JS {
  engine ??= (createRequire(import.meta.url)('re2js') as typeof Re2js).RE2JS;
  return engine;
}

let engine: typeof Re2js.RE2JS | undefined;
