import { createRequire } from 'node:module';

/** undici, loaded on first use (it is CommonJS, so synchronously): only TLS upstreams and fallbacks need it. */
export function loadUndici(): typeof import('undici') {
  undici ??= createRequire(import.meta.url)('undici') as typeof import('undici');
  return undici;
}

let undici: typeof import('undici') | undefined;
