// Rewrites docs/flags.md from the flag table (src/cli/flags.ts), so the reference never drifts from `--help`.
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { flagsMarkdown } from '../src/cli/flags.ts';

writeFileSync(resolve(import.meta.dirname, '../docs/flags.md'), flagsMarkdown());
