import { Worker } from 'node:worker_threads';

/**
 * A worker thread running `./<entry>.js` of this folder (`.ts` when run from source: the thread then registers
 * tsx's loader first, since a worker does not inherit the parent's hooks).
 */
export function spawnThread(entry: string, workerData: unknown): Worker {
  const extension = import.meta.url.slice(import.meta.url.lastIndexOf('.'));
  const url = new URL(`./${entry}${extension}`, import.meta.url);
  if (extension !== '.ts') return new Worker(url, { workerData });
  const code = `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(url.href)}); })`;
  return new Worker(code, { eval: true, workerData });
}
