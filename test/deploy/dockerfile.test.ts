import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from './manifests.ts';

const dockerfile = readFileSync(join(REPO_ROOT, 'Dockerfile'), 'utf8');
const instructions = dockerfile
  .split('\n')
  .filter((l) => l.trim() !== '' && !l.trimStart().startsWith('#'))
  .map((l) => l.trim());
const stages = dockerfile.split(/^FROM /m).slice(1);
const finalStage = stages.at(-1) ?? '';

describe('Dockerfile', () => {
  it('builds on a current LTS Node.js image, pinned by major', () => {
    expect(dockerfile).toMatch(/^ARG NODE_IMAGE=node:(22|24)-(alpine|slim|bookworm-slim)$/m);
  });

  it('compiles with npm run build, whose tsconfig.build.json emits src/ to dist/', () => {
    expect(instructions).toContain('RUN npm run build');
    const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(pkg.scripts['build']).toBe('tsc -p tsconfig.build.json');
    const build = JSON.parse(readFileSync(join(REPO_ROOT, 'tsconfig.build.json'), 'utf8')) as {
      compilerOptions: { rootDir: string; outDir: string };
    };
    expect(build.compilerOptions).toMatchObject({ rootDir: 'src', outDir: 'dist' });
  });

  it('ships production dependencies only, and runs dist/main.js as a numeric non-root user', () => {
    expect(dockerfile).toMatch(/npm ci --omit=dev/);
    expect(finalStage).not.toMatch(/npm (ci|install)(?! --omit=dev)/);
    expect(finalStage).toMatch(/^USER [1-9][0-9]*(:[0-9]+)?$/m);
    expect(finalStage).toMatch(/^ENTRYPOINT \["node", "dist\/main\.js"\]$/m);
  });

  it('ships the CRDs the file source validates objects against', () => {
    expect(finalStage).toMatch(/^COPY deploy\/crds \.\/deploy\/crds$/m);
  });

  it('does not ignore what the build copies', () => {
    const ignored = readFileSync(join(REPO_ROOT, '.dockerignore'), 'utf8')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '' && !l.startsWith('#'));
    for (const needed of [
      'src',
      'package.json',
      'package-lock.json',
      'tsconfig.json',
      'tsconfig.build.json',
    ]) {
      expect(ignored).not.toContain(needed);
    }
    expect(ignored).toContain('node_modules');
  });
});
