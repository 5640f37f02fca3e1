import { FORMAT_NAMES } from './k8s-cel-format.ts';

/**
 * Source rewrites for the three places where @marcbachmann/cel-js differs from the CEL that Kubernetes runs:
 * its `matches` uses JavaScript regex semantics (no `(?i)`, compiled per call), and its `has()` only takes
 * a field chain starting at a variable (`has(self[0].matches)` is rejected), and it has no namespaced objects
 * for the Kubernetes `format` library (k8s-cel-format.ts). The rewrites keep the
 * meaning: `re2Matches` runs the RE2 pattern, and `has(e.f)` on a map is `'f' in e` (every CEL value here
 * is a map, a list or a scalar: there are no protobuf messages in CRD validation).
 */
export function rewriteForCelJs(expression: string): string {
  return rewriteIndexedHas(useRe2Matches(useFormatFunction(expression)));
}

/** `format.<name>().validate(` → `k8sFormatValidate('<name>', ` for the names k8s-cel-format.ts knows. */
function useFormatFunction(expression: string): string {
  return replaceOutsideLiterals(expression, /^\bformat\.([A-Za-z0-9]+)\(\s*\)\.validate\(/, (m, before) =>
    FORMAT_NAMES.has(m[1]!) && !/[A-Za-z0-9_.]/.test(before) ? `k8sFormatValidate('${m[1]}', ` : undefined,
  );
}

/** Applies `replace` at each position outside string literals where `pattern` (anchored) matches. */
function replaceOutsideLiterals(
  expression: string,
  pattern: RegExp,
  replace: (match: RegExpExecArray, before: string) => string | undefined,
): string {
  let out = '';
  let i = 0;
  while (i < expression.length) {
    const literal = stringLiteralEnd(expression, i);
    if (literal > i) {
      out += expression.slice(i, literal);
      i = literal;
      continue;
    }
    const m = pattern.exec(expression.slice(i, i + 80));
    const replacement = m ? replace(m, expression[i - 1] ?? '') : undefined;
    if (m && replacement !== undefined) {
      out += replacement;
      i += m[0].length;
      continue;
    }
    out += expression[i];
    i++;
  }
  return out;
}

/**
 * Rewrites calls of the CEL standard `matches` to `re2Matches`, which uses compileRe2; string literals are
 * left alone, so a rule that merely mentions ".matches(" in a message is unchanged.
 */
function useRe2Matches(expression: string): string {
  return replaceOutsideLiterals(expression, /^(\.|\b)matches(\s*\()/, (call, before) =>
    call[1] === '.' || !/[A-Za-z0-9_.]/.test(before) ? `${call[1]}re2Matches${call[2]}` : undefined,
  );
}

/** The index just past a string literal starting at `start` (raw, bytes and triple-quoted too), or `start`. */
function stringLiteralEnd(s: string, start: number): number {
  let i = start;
  while (i < s.length && /[rRbB]/.test(s[i] as string) && i - start < 2) i++;
  const quote = s[i];
  if (quote !== '"' && quote !== "'") return start;
  if (i > start && /[A-Za-z0-9_]/.test(s[start - 1] ?? '')) return start;
  const raw = /[rR]/.test(s.slice(start, i));
  const triple = s.startsWith(quote.repeat(3), i);
  const close = triple ? quote.repeat(3) : quote;
  let j = i + close.length;
  while (j < s.length) {
    if (!raw && s[j] === '\\') {
      j += 2;
      continue;
    }
    if (s.startsWith(close, j)) return j + close.length;
    j++;
  }
  return s.length;
}

function rewriteIndexedHas(expression: string): string {
  let out = '';
  let i = 0;
  while (i < expression.length) {
    const literal = stringLiteralEnd(expression, i);
    if (literal > i) {
      out += expression.slice(i, literal);
      i = literal;
      continue;
    }
    const isCall =
      expression.startsWith('has(', i) && (i === 0 || !/[A-Za-z0-9_.]/.test(expression[i - 1] as string));
    const close = isCall ? matchingParen(expression, i + 3) : -1;
    if (close > 0) {
      const arg = expression.slice(i + 4, close);
      const field = /\.\s*([A-Za-z_][A-Za-z0-9_]*)\s*$/.exec(arg);
      if (field && /[[(]/.test(arg)) {
        const base = arg.slice(0, field.index);
        out += `('${field[1]}' in (${rewriteIndexedHas(base)}))`;
        i = close + 1;
        continue;
      }
    }
    out += expression[i];
    i++;
  }
  return out;
}

/** Index of the parenthesis closing the one at `open`, skipping string literals; -1 if unbalanced. */
function matchingParen(s: string, open: number): number {
  let depth = 0;
  let i = open;
  while (i < s.length) {
    const literal = stringLiteralEnd(s, i);
    if (literal > i) {
      i = literal;
      continue;
    }
    if (s[i] === '(') depth++;
    else if (s[i] === ')' && --depth === 0) return i;
    i++;
  }
  return -1;
}
