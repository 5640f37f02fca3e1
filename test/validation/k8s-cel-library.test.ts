import { describe, expect, it } from 'vitest';
import { rewriteForCelJs } from '../../src/validation/cel-rewrite.ts';
import { createCelEnvironment } from '../../src/validation/k8s-cel-library.ts';
import { compileRe2 } from '../../src/validation/re2.ts';

const env = createCelEnvironment();
function run(expression: string, self?: unknown): unknown {
  const program = env.parse(rewriteForCelJs(expression));
  const checked = program.check();
  if (!checked.valid) throw checked.error;
  return program({ self });
}

// Examples from the documentation of k8s.io/apiserver/pkg/cel/library (lists.go, ip.go, regex).
describe('Kubernetes CEL library, documented examples', () => {
  it.each([
    ['[1, 2, 3].isSorted()', true],
    ["['a', 'b', 'b', 'c'].isSorted()", true],
    ['[2.0, 1.0].isSorted()', false],
    ['[1, 3].sum()', 4n],
    ['[1.0, 3.0].sum()', 4],
    ['[].sum()', 0n],
    ['[1, 3].min()', 1n],
    ['[1, 3].max()', 3n],
    ['[1].min()', 1n],
    ['[1, 2, 2, 3].indexOf(2)', 1n],
    ["['a', 'b', 'b', 'c'].lastIndexOf('b')", 2n],
    ['[1.0].indexOf(1.1)', -1n],
    ["[].indexOf('string')", -1n],
    ["isIP('127.0.0.1')", true],
    ["isIP('::1')", true],
    ["isIP('127.0.0.256')", false],
    ["isIP(':::1')", false],
    ["isIP('fe80::1%eth0')", false],
    ["isCIDR('192.168.0.0/16')", true],
    ["isCIDR('::1/128')", true],
    ["isCIDR('192.168.0.0/33')", false],
    ["isCIDR('192.168.0.0')", false],
    ["'abc'.matches('^[a-z]+$')", true],
    ["'ABC'.matches('^(?i)[a-z]+$')", true],
    ["'ABC'.matches('^[a-z]+$')", false],
    ["'a.b.c'.split('.').size()", 3n],
    ["'hello'.substring(1, 3)", 'el'],
    ["'TacoCat'.lowerAscii()", 'tacocat'],
  ])('%s == %s', (expression, expected) => {
    expect(run(expression)).toEqual(expected);
  });

  // format.go's examples: validate() gives nothing for a valid value and the list of errors otherwise.
  it.each([
    ["format.dns1123Label().validate('my-label-name')", null],
    ["format.dns1123Label().validate('my.label') == null", false],
    ["format.dns1123Label().validate('a' + 'b'.repeat(63)).size() > 0", true],
    ["format.dns1123Subdomain().validate('apiextensions.k8s.io')", null],
    ["format.dns1123Subdomain().validate('-a.b') == null", false],
    ["format.dns1035Label().validate('my-label-name')", null],
    ["format.dns1035Label().validate('1abc') == null", false],
    ["format.qualifiedName().validate('apiextensions.k8s.io/v1beta1')", null],
    ["format.qualifiedName().validate('/x') == null", false],
    ["format.labelValue().validate('my-cool-label-Value')", null],
    ["format.labelValue().validate('')", null],
    ["format.labelValue().validate('-x') == null", false],
    ["format.uuid().validate('7f8e6e4f-0f7f-4b8c-9b1e-2c0a8d2b5e41')", null],
    ["format.uuid().validate('not-a-uuid') == null", false],
  ])('%s == %s', (expression, expected) => {
    expect(run(expression.replace("'b'.repeat(63)", `'${'b'.repeat(63)}'`))).toEqual(expected);
  });

  it('an unknown format does not compile, so its rule is reported, never skipped', () => {
    expect(() => run("format.noSuchFormat().validate('x')")).toThrow();
    expect(rewriteForCelJs("self.x == 'format.dns1123Label().validate('")).toBe(
      "self.x == 'format.dns1123Label().validate('",
    );
  });

  it('min() of an empty list and sum() of strings are errors, as documented', () => {
    expect(() => run('[].min()')).toThrow(/empty/);
    expect(() => run("['a', 'b'].sum()")).toThrow(/no such overload/);
  });
});

describe('rewrites for cel-js', () => {
  it('has() on an indexed field chain becomes key membership; string literals are untouched', () => {
    expect(rewriteForCelJs('has(self[0].matches) && self.x.matches("has(a[0].b)")')).toBe(
      `('matches' in (self[0])) && self.x.re2Matches("has(a[0].b)")`,
    );
    expect(run('has(self[0].matches)', [{ matches: [] }])).toBe(true);
    expect(run('has(self[0].matches)', [{}])).toBe(false);
    expect(run('has(self.matches[0].path)', { matches: [{ path: {} }] })).toBe(true);
    expect(run('has(self.a)', { a: 1 })).toBe(true);
  });

  it('RE2 patterns compile once', () => {
    expect(compileRe2('^(?i)abc$')).toBe(compileRe2('^(?i)abc$'));
    expect(compileRe2('^(?i)abc$').test('ABC')).toBe(true);
  });
});
