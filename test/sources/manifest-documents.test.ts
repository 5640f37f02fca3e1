import { describe, expect, it } from 'vitest';
import { runAllSteps } from '../../src/ir/steps.ts';
import { mulberry32 } from '../../src/lb/seeded-random.ts';
import { keptEntryOf, parseDocumentsInSteps } from '../../src/sources/file/manifest-documents.ts';
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

  it('after random edits of single documents (edited, added, removed, moved, broken, lines added or removed) equals a whole parse, kept documents keeping their entries', () => {
    for (const seed of [1, 2, 3, 4]) {
      const random = mulberry32(seed);
      const pick = (n: number) => Math.floor(random() * n);
      let version = 0;
      const document = () => {
        version++;
        const roll = random();
        if (roll < 0.08) return 'kind: Service\nmetadata: {name: [broken\n';
        if (roll < 0.16) return `apiVersion: v1\nkind: Service\nmetadata: {namespace: ns}\n`;
        const extra =
          roll < 0.3 ? `  type: A\n  type: B${version}\n` : `  clusterIP: None\n  # v${version}\n`;
        // Comment lines above: an edit changes the document's line count, moving every later document.
        return '# note\n'.repeat(pick(4)) + service(`s${pick(12)}`, roll < 0.6 ? extra : '');
      };
      let keptMoved = 0;
      let lastLines = new Map<object, number>();
      const docs = Array.from({ length: 8 }, document);
      let last: ReturnType<typeof parse> | undefined;
      for (let step = 0; step < 120; step++) {
        const roll = random();
        const at = pick(docs.length + 1);
        if (roll < 0.5 && docs.length > 0) docs[at % docs.length] = document();
        else if (roll < 0.7) docs.splice(at, 0, document());
        else if (roll < 0.85 && docs.length > 1) docs.splice(at % docs.length, 1);
        else if (docs.length > 1) {
          const [moved] = docs.splice(at % docs.length, 1) as [string];
          docs.splice(pick(docs.length + 1), 0, moved);
        }
        const text = docs.join('---\n');
        const next = parse(text, last?.documents);
        const whole = parseManifest('f.yaml', text);
        const context = `seed ${seed} step ${step}`;
        expect(next.parsed.objects, context).toEqual(whole.objects);
        expect(
          next.parsed.entries.map((e) => [e.line, e.duplicates]),
          context,
        ).toEqual(whole.entries.map((e) => [e.line, e.duplicates]));
        expect([...next.parsed.syntaxErrors, ...next.parsed.invalidObjects], context).toEqual([
          ...whole.syntaxErrors,
          ...whole.invalidObjects,
        ]);
        // A kept document gives the very entry it gave last time, wherever it moved (a text written twice in the
        // file is one parsed document at two places: not remembered by place); its line is where it is now
        // (checked above against the whole parse).
        if (
          last !== undefined &&
          next.parsed.syntaxErrors.length === 0 &&
          last.parsed.syntaxErrors.length === 0
        ) {
          const before = new Map(last.parsed.entries.map((e) => [e.object, e]));
          const once = (entries: readonly { readonly object: object }[], object: object) =>
            entries.filter((e) => e.object === object).length === 1;
          for (const entry of next.parsed.entries) {
            if (!once(next.parsed.entries, entry.object) || !once(last.parsed.entries, entry.object))
              continue;
            const was = before.get(entry.object);
            if (was === undefined) continue;
            // One parsed last time (with its syntax tree) is kept as the placed entry that stands for it.
            expect(entry, context).toBe(was.locate === undefined ? was : keptEntryOf(was));
            if (lastLines.get(was) !== entry.line) keptMoved++;
          }
        }
        last = next;
        lastLines = new Map(next.parsed.entries.map((e) => [e, e.line]));
      }
      expect(keptMoved, `seed ${seed}`).toBeGreaterThan(20);
    }
  });
});
