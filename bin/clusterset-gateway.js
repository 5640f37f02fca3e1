#!/usr/bin/env node
// Installed entry point: runs the compiled program in dist/ (npm run build; `npm ci` and `npm start` build it
// first). Only the tests run the TypeScript source.
import { existsSync } from 'node:fs';

const compiled = new URL('../dist/main.js', import.meta.url);
if (!existsSync(compiled)) {
  process.stderr.write('clusterset-gateway: dist/main.js is missing; run `npm run build` first\n');
  process.exit(1);
}
await import(compiled.href);
