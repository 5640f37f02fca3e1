import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_CRD_DIR, EXPERIMENTAL_CRD_DIR } from '../../src/validation/crd-loader.ts';
import { REPO_ROOT } from './manifests.ts';

const dockerfile = readFileSync(join(REPO_ROOT, 'Dockerfile'), 'utf8');
const instructions = dockerfile
  .split('\n')
  .filter((l) => l.trim() !== '' && !l.trimStart().startsWith('#'))
  .map((l) => l.trim());
const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
  bin: Record<string, string>;
  scripts: Record<string, string>;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
const stages = dockerfile.split(/^FROM /m).slice(1);
const finalStage = stages.at(-1) ?? '';

describe('Dockerfile', () => {
  it('builds on a current LTS Node.js image, pinned by major', () => {
    expect(dockerfile).toMatch(/^ARG NODE_IMAGE=node:(22|24)-(alpine|slim|bookworm-slim)$/m);
  });

  it('compiles with npm run build, whose tsconfig.build.json emits src/ to dist/', () => {
    expect(instructions).toContain('RUN npm run build');
    expect(pkg.scripts['build']).toBe('node scripts/build.mjs');
    const script = readFileSync(join(REPO_ROOT, 'scripts/build.mjs'), 'utf8');
    expect(script).toContain("'tsconfig.build.json'");
    // tsc emits no static files: the topology page's are copied beside the compiled admin server.
    expect(script).toContain("const builtDir = outDirChosen ?? 'dist';");
    expect(script).toContain("cpSync('src/admin/ui', join(builtDir, 'admin/ui')");
    const build = JSON.parse(readFileSync(join(REPO_ROOT, 'tsconfig.build.json'), 'utf8')) as {
      compilerOptions: { rootDir: string; outDir: string };
    };
    expect(build.compilerOptions).toMatchObject({ rootDir: 'src', outDir: 'dist' });
  });

  it('ships production dependencies only, and runs dist/main.js as a numeric non-root user', () => {
    expect(dockerfile).toMatch(/npm ci --omit=dev/);
    expect(finalStage).not.toMatch(/npm (ci|install)(?! --omit=dev)/);
    expect(finalStage).toMatch(/^USER [1-9][0-9]*(:[0-9]+)?$/m);
    expect(finalStage).toMatch(/^ENTRYPOINT \["node", "--max-semi-space-size=8", "dist\/main\.js"\]$/m);
  });

  it('ships every CRD folder the file source validates objects against, at the path the compiled loader reads', () => {
    // dist/validation/crd-loader.js resolves its folders from its own place, as src/validation/crd-loader.ts does;
    // the build turns them into the bundle beside it, and the image ships the very files the bundle was made of.
    const buildStage = stages[0] ?? '';
    for (const dir of [DEFAULT_CRD_DIR, EXPERIMENTAL_CRD_DIR]) {
      const folder = relative(REPO_ROOT, dir);
      expect(buildStage.indexOf(`COPY ${folder} ./${folder}\n`)).toBeGreaterThan(-1);
      expect(buildStage.indexOf(`COPY ${folder} ./${folder}\n`)).toBeLessThan(
        buildStage.indexOf('RUN npm run build'),
      );
      expect(finalStage).toMatch(new RegExp(`^COPY --from=build /app/${folder} \\./${folder}$`, 'm'));
    }
  });

  it('does not ignore what the build copies', () => {
    const patterns = readFileSync(join(REPO_ROOT, '.dockerignore'), 'utf8')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '' && !l.startsWith('#'));
    // As Docker reads it: the last pattern that matches a path (or one of its parents) decides.
    const ignoredPath = (path: string): boolean => {
      let ignored = false;
      for (const pattern of patterns) {
        const exception = pattern.startsWith('!');
        const p = exception ? pattern.slice(1) : pattern;
        if (path === p || path.startsWith(`${p}/`)) ignored = !exception;
      }
      return ignored;
    };
    const copied = dockerfile
      .split('\n')
      .filter((l) => /^COPY (?!--from)/.test(l))
      .flatMap((l) => l.split(/\s+/).slice(1, -1))
      .map((p) => p.replace(/^\.\//, '').replace(/\/$/, ''));
    expect(copied).toEqual(
      expect.arrayContaining(['src', 'package.json', 'deploy/crds', 'deploy/crds-experimental']),
    );
    for (const path of copied) expect(ignoredPath(path), path).toBe(false);
    expect(ignoredPath('node_modules')).toBe(true);
  });

  it('depends at run time on exactly the packages src/ imports; tools and the bench stay dev-only', () => {
    const imported = new Set<string>();
    const walk = (dir: string): void => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (entry.name.endsWith('.ts')) {
          for (const [, spec] of readFileSync(path, 'utf8').matchAll(/\bfrom '([^'.][^']*)'/g)) {
            if (spec === undefined || spec.startsWith('node:')) continue;
            const parts = spec.split('/');
            imported.add(spec.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? spec));
          }
        }
      }
    };
    walk(join(REPO_ROOT, 'src'));
    expect(Object.keys(pkg.dependencies).sort()).toEqual([...imported].sort());
    for (const devOnly of ['tsx', 'http-proxy', 'typescript', 'vitest']) {
      expect(pkg.devDependencies).toHaveProperty(devOnly);
    }
    expect(pkg.devDependencies).not.toHaveProperty('vite');
  });

  it('installs a bin that runs the compiled dist/, not the TypeScript source', () => {
    const bin = readFileSync(join(REPO_ROOT, pkg.bin['clusterset-gateway'] ?? ''), 'utf8');
    expect(bin).toMatch(/\.\.\/dist\/main\.js/);
    expect(bin).not.toMatch(/tsx|\.ts['"]/);
  });
});
