#!/usr/bin/env node
// Installed entry point: runs the compiled program (npm run build) when present, else the TypeScript source.
import { existsSync } from 'node:fs';
import { register } from 'node:module';

const compiled = new URL('../dist/main.js', import.meta.url);
if (existsSync(compiled)) {
  await import(compiled.href);
} else {
  register('tsx/esm', import.meta.url);
  await import(new URL('../src/main.ts', import.meta.url).href);
}
