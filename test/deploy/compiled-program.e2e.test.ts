import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from './manifests.ts';

const run = promisify(execFile);
const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
  bin: Record<string, string>;
  scripts: Record<string, string>;
};

/**
 * Issues 28 and 31: what users run is the compiled program. `npm ci` builds it (prepare), `npm start` builds it
 * again and runs dist/main.js (no tsx at run time), and the bin works from a fresh clone after `npm ci`.
 */
describe('the compiled program', () => {
  it('is what npm start runs, built by prestart and by npm ci (prepare)', () => {
    // `exec`: the gateway takes the shell's place, so the signals npm forwards to its script reach it.
    expect(pkg.scripts['start']).toBe('exec node --max-semi-space-size=8 --optimize-for-size dist/main.js');
    expect(pkg.scripts['prestart']).toBe('node scripts/build.mjs');
    expect(pkg.scripts['prepare']).toBe('node scripts/build.mjs');
    expect(pkg.bin['clusterset-gateway']).toBe('bin/clusterset-gateway.js');
  });

  it('builds from the sources and answers --help through the bin, as npx clusterset-gateway does', async () => {
    await run(process.execPath, ['scripts/build.mjs'], { cwd: REPO_ROOT, timeout: 120_000 });
    const help = await run(process.execPath, [join(REPO_ROOT, pkg.bin['clusterset-gateway']!), '--help'], {
      timeout: 60_000,
    });
    expect(help.stdout).toMatch(/^Usage: clusterset-gateway /m);
    expect(help.stdout).toContain('--manifests');
    const refused = await run(process.execPath, [join(REPO_ROOT, 'dist/main.js'), '--no-such-flag']).catch(
      (error: { code: number; stderr: string }) => error,
    );
    expect(refused).toMatchObject({ code: 2 });
  }, 180_000);
});
