import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const PREFIX = 'clusterset-gateway-demo-';
const OWNED = /^clusterset-gateway-demo-(?:hub|fleet)-(\d+)-/;

/**
 * The demo's temporary folders (the hub manifests, the world's credentials and certificate) are named after
 * the process that owns them, which removes them when it stops. A process killed outright cannot: the next
 * demo removes the folders of owners that no longer run (issue 42: a `kill -9` leaves nothing that the next
 * start does not clean up).
 */
export function makeDemoFolder(kind: 'hub' | 'fleet', dir = tmpdir()): string {
  return mkdtempSync(join(dir, `${PREFIX}${kind}-${process.pid}-`));
}

/** Removes the demo folders whose owner process is gone; returns their paths. */
export function removeStaleDemoFolders(dir = tmpdir()): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    const owner = OWNED.exec(name)?.[1];
    if (owner === undefined || running(Number(owner))) continue;
    const path = join(dir, name);
    rmSync(path, { recursive: true, force: true });
    removed.push(path);
  }
  return removed;
}

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
