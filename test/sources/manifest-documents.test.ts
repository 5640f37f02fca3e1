import { describe, expect, it } from 'vitest';
import { runAllSteps } from '../../src/ir/steps.ts';
import { parseDocumentsInSteps } from '../../src/sources/file/manifest-documents.ts';
import { type ParsedManifest, parseManifest } from '../../src/sources/file/manifest-parser.ts';

const service = (name: string, extra = '') =>
  `apiVersion: v1\nkind: Service\nmetadata:\n  name: ${name}\n  namespace: ns\nspec:\n  ports: [{port: 80}]\n${extra}`;
const parse = (text: string, previous?: ReadonlyMap<string, ParsedManifest>) =>
  runAllSteps(parseDocumentsInSteps('f.yaml', text, {}, previous));
const summary = (p: ParsedManifest) => ({
  objects: p.objects,
  lines: p.entries.map((e) => [e.line, e.duplicates, e.locate?.('spec.ports')]),
  problems: [...p.syntaxErrors, ...p.invalidObjects],
  others: p.others.map((o) => [o.line, o.kind, o.refused]),
});

describe('parsing a manifest file a document at a time', () => {
  it('reads a file as parseManifest does: objects, lines, field lines, problems', () => {
    const text = [
      service('one'),
      '---',
      service('two', '  type: ClusterIP\n'),
      '---',
      'apiVersion: v1\nkind: Service\nmetadata: {namespace: ns}\n',
      '---\n# only a comment\n---',
      'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n',
      '---',
      service('three').replace('spec:\n', 'spec:\n  type: A\n  type: B\n'),
    ].join('\n');
    const whole = parseManifest('f.yaml', text);
    const { parsed, documents } = parse(text);
    expect(documents.size).toBeGreaterThan(1);
    expect(summary(parsed)).toEqual(summary(whole));
    expect(whole.invalidObjects.length + whole.entries.flatMap((e) => e.duplicates).length).toBeGreaterThan(
      0,
    );
  });

  it('parses again only the documents whose text changed; the others are the same objects', () => {
    const before = [service('one'), service('two'), service('three')].join('---\n');
    const first = parse(before);
    const after = [service('one', '  clusterIP: None\n'), service('two'), service('three')].join('---\n');
    const second = parse(after, first.documents);
    const [one, two, three] = second.parsed.objects;
    expect(one).not.toBe(first.parsed.objects[0]);
    expect(two).toBe(first.parsed.objects[1]);
    expect(three).toBe(first.parsed.objects[2]);
    // The kept documents moved a line down: their lines follow (field lines only for the document parsed again).
    const whole = parseManifest('f.yaml', after);
    expect(second.parsed.objects).toEqual(whole.objects);
    expect(second.parsed.entries.map((e) => e.line)).toEqual(whole.entries.map((e) => e.line));
    expect(second.parsed.entries[0]?.locate?.('spec.clusterIP')).toBe(
      whole.entries[0]?.locate?.('spec.clusterIP'),
    );
    expect(second.parsed.entries[1]?.locate).toBeUndefined();
    expect(second.parsed.entries[2]?.line).toBe((first.parsed.entries[2]?.line ?? 0) + 1);
  });

  it('reads a file with directives, end markers or content on a --- line whole, as one stream', () => {
    for (const text of [
      `%YAML 1.2\n---\n${service('one')}`,
      `${service('one')}...\n---\n${service('two')}`,
      `--- ${JSON.stringify({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'x', namespace: 'ns' } })}\n`,
    ]) {
      const { parsed, documents } = parse(text);
      expect(documents.size).toBe(0);
      expect(summary(parsed)).toEqual(summary(parseManifest('f.yaml', text)));
    }
  });

  it('a syntax error in one document makes the whole file unusable, named at its line in the file', () => {
    const text = `${service('one')}---\n${service('two')}---\nkind: Service\nmetadata: {name: [x\n`;
    const { parsed } = parse(text);
    expect(parsed.objects).toEqual([]);
    expect(parsed.syntaxErrors.map((e) => e.line)).toEqual(
      parseManifest('f.yaml', text).syntaxErrors.map((e) => e.line),
    );
  });
});
