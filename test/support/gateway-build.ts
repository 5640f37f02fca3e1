import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';

/**
 * The e2e project's global setup: the gateway the tests start is the compiled build, as shipped (`npm start` runs
 * dist/main.js), not src/ under tsx, whose loader takes about 2 s more CPU per start (a suite starts gateways a
 * hundred times). The build goes to dist-test/, never dist/, which a benchmark or `npm start` may be running at
 * the time, and is made again only when what it is built from changed (a digest of those files' contents).
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BUILD_DIR = 'dist-test';
const DIGEST_FILE = 'build-digest';
/** What a build is made of: a change to any of these makes the next run build again. */
const INPUTS = [
  'src',
  'deploy/crds',
  'deploy/crds-experimental',
  'scripts/build.mjs',
  'tsconfig.json',
  'tsconfig.build.json',
];

declare module 'vitest' {
  export interface ProvidedContext {
    /** The compiled gateway's entry point (dist-test/main.js). */
    gatewayMain: string;
  }
}

export default function setup(project: TestProject): void {
  const digest = inputsDigest();
  const built = join(ROOT, BUILD_DIR);
  if (readIfExists(join(built, DIGEST_FILE)) !== digest) {
    // Built beside the old one and swapped in, so another test run in this checkout never sees half a build.
    const fresh = `${BUILD_DIR}.${process.pid}`;
    execFileSync(process.execPath, ['scripts/build.mjs', '--out-dir', fresh], {
      cwd: ROOT,
      stdio: 'inherit',
    });
    writeFileSync(join(ROOT, fresh, DIGEST_FILE), digest);
    const old = `${BUILD_DIR}.old.${process.pid}`;
    if (existsSync(built)) renameSync(built, join(ROOT, old));
    renameSync(join(ROOT, fresh), built);
    rmSync(join(ROOT, old), { recursive: true, force: true });
  }
  project.provide('gatewayMain', join(built, 'main.js'));
}

function inputsDigest(): string {
  const hash = createHash('sha256');
  for (const input of INPUTS) {
    for (const file of filesUnder(join(ROOT, input))) {
      hash.update(relative(ROOT, file));
      hash.update(readFileSync(file));
    }
  }
  return hash.digest('hex');
}

function filesUnder(path: string): string[] {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (stat === undefined) return [];
  if (stat.isFile()) return [path];
  return readdirSync(path, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
}

function readIfExists(path: string): string | undefined {
  return existsSync(path) ? readFileSync(path, 'utf8') : undefined;
}
