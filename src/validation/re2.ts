/**
 * RE2 patterns (what CEL `matches` and OpenAPI `pattern` mean in Kubernetes) run on JavaScript RegExp. The
 * patterns in Gateway API CRDs use the common subset plus a leading `(?i)`, which JavaScript spells as a
 * flag. Compiled patterns are cached: rules are evaluated thousands of times with a handful of patterns.
 */
const cache = new Map<string, RegExp>();

export function compileRe2(pattern: string): RegExp {
  let re = cache.get(pattern);
  if (re) return re;
  let source = pattern;
  let flags = 'u';
  // `(?i)` at the start, or just after `^` as Gateway API writes it; JavaScript has no inline flags.
  const leading = /^(\^?)\(\?([imsU]+)\)/.exec(source);
  if (leading) {
    source = leading[1] + source.slice(leading[0].length);
    for (const flag of leading[2] as string) {
      if (flag === 'i' || flag === 's' || flag === 'm') flags += flag;
      else throw new Error(`unsupported RE2 flag ${flag} in ${pattern}`);
    }
  }
  source = source.replaceAll('\\z', '$').replaceAll('\\A', '^');
  try {
    re = new RegExp(source, flags);
  } catch {
    // Unicode mode rejects some escapes RE2 accepts (e.g. `\-` outside a class); retry without it.
    re = new RegExp(source, flags.replace('u', ''));
  }
  cache.set(pattern, re);
  return re;
}
