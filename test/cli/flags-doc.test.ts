import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FLAGS, flagsMarkdown } from '../../src/cli/flags.ts';

describe('docs/flags.md', () => {
  it('lists every flag with its --help text (npm run docs:flags rewrites it)', () => {
    const doc = readFileSync(resolve(import.meta.dirname, '../../docs/flags.md'), 'utf8');
    expect(doc, 'docs/flags.md lags behind src/cli/flags.ts: run `npm run docs:flags`').toBe(flagsMarkdown());
    for (const name of Object.keys(FLAGS)) expect(doc).toContain(`\`--${name}`);
  });
});
