// npm run build (and prestart, prepare): compile src/ to dist/, then copy what the compiler does not emit: the
// topology page's static files (src/admin/ui), served by the admin server from beside its compiled module.
//
// Each file is transpiled on its own (TypeScript's transpileModule, the options of tsconfig.build.json): no type
// check, which `npm test` and `npm run typecheck` do, so a build takes seconds where `tsc -p` takes a quarter of a
// minute of CPU. That is what lets `npm start` and `npm ci` build every time (issue 31). `--check` adds the full
// type-checked compile (tsc -p tsconfig.build.json), as before. `--out-dir DIR` writes elsewhere than dist/ (the e2e
// tests' own build, test/support/gateway-build.ts); DIR must sit beside dist/, at the project's top, since the
// compiled modules find deploy/ as `../../deploy` from their own folder.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const require = createRequire(import.meta.url);
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const tscPath = require.resolve('typescript/bin/tsc');
// npm runs scripts from the package folder; `node scripts/build.mjs` from elsewhere builds the same.
process.chdir(root);
const outDirFlag = process.argv.indexOf('--out-dir');
const outDirChosen = outDirFlag === -1 ? undefined : process.argv[outDirFlag + 1];

if (process.argv.includes('--check') && outDirChosen !== undefined) {
  fail({ messageText: '--check writes dist/ only (tsc -p tsconfig.build.json); drop --out-dir' });
}
if (process.argv.includes('--check')) {
  execFileSync(process.execPath, [tscPath, '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
} else {
  const ts = require('typescript');
  const parsed = ts.getParsedCommandLineOfConfigFile(
    'tsconfig.build.json',
    {},
    { ...ts.sys, onUnRecoverableConfigFileDiagnostic: fail },
  );
  if (parsed === undefined || parsed.errors.length > 0) fail(parsed?.errors[0]);
  // Every source is an ES module (package.json "type": "module"), which NodeNext would learn from package.json.
  const options = {
    ...parsed.options,
    module: ts.ModuleKind.ES2022,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    noEmit: false,
    declaration: false,
    isolatedModules: true,
  };
  const outDir = outDirChosen === undefined ? parsed.options.outDir : join(root, outDirChosen);
  const rootDir = parsed.options.rootDir;
  rmSync(outDir, { recursive: true, force: true });
  const files = parsed.fileNames.filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'));
  const sources = await Promise.all(files.map((file) => readFile(file, 'utf8')));
  const made = new Set();
  files.forEach((file, i) => {
    const out = join(outDir, relative(rootDir, file)).replace(/\.ts$/, '.js');
    const result = ts.transpileModule(sources[i], { compilerOptions: options, fileName: file, reportDiagnostics: true });
    if (result.diagnostics?.length) fail(result.diagnostics[0]);
    const dir = dirname(out);
    if (!made.has(dir)) {
      mkdirSync(dir, { recursive: true });
      made.add(dir);
    }
    let text = result.outputText;
    if (result.sourceMapText !== undefined) {
      // transpileModule names the map after the source; tsc's layout is `<file>.js.map` beside the output.
      const mapName = `${out.slice(dir.length + 1)}.map`;
      text = text.replace(/\/\/# sourceMappingURL=\S+\s*$/, `//# sourceMappingURL=${mapName}`);
      const map = JSON.parse(result.sourceMapText);
      map.file = out.slice(dir.length + 1);
      map.sources = [relative(dir, file)];
      writeFileSync(`${out}.map`, JSON.stringify(map));
    }
    writeFileSync(out, text);
  });
}
const builtDir = outDirChosen ?? 'dist';
cpSync('src/admin/ui', join(builtDir, 'admin/ui'), { recursive: true });
// The shipped CRDs as JSON beside the compiled loader, with an index of their kinds: a process then neither reads
// the 2.6 MB of YAML at start nor loads a YAML parser for it (src/validation/crd-loader.ts, writeCrdBundle).
const { writeCrdBundle } = await import(pathToFileURL(join(root, builtDir, 'validation/crd-loader.js')).href);
writeCrdBundle();

function fail(diagnostic) {
  const ts = require('typescript');
  const text = diagnostic === undefined ? 'unknown error' : ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
  process.stderr.write(`build: ${diagnostic?.file ? `${diagnostic.file.fileName}: ` : ''}${text}\n`);
  process.exit(1);
}
