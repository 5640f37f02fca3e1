import { open, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';

/** The manifests folder on disk: which files are manifests, reading one within a size limit, errors in words. */

const MANIFEST_FILE = /\.(ya?ml|json)$/i;

/**
 * The file's text; its size when over `maxBytes`; undefined when it is gone; `unreadable` with the reason when
 * it cannot be read (permissions, a folder named like a manifest): that file's problem, never the process's.
 */
export async function readBounded(
  path: string,
  maxBytes: number,
): Promise<string | number | undefined | { readonly unreadable: string }> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    return { unreadable: fsReason(error) };
  }
  try {
    const { size } = await handle.stat();
    if (size > maxBytes) return size;
    const buffer = Buffer.alloc(Math.min(size, maxBytes) + 1);
    let length = 0;
    while (length < buffer.length) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
    }
    // It grew between stat and read.
    if (length > maxBytes) return length;
    return buffer.subarray(0, length).toString('utf8');
  } catch (error) {
    return { unreadable: fsReason(error) };
  } finally {
    await handle.close();
  }
}

/**
 * What stat says of a file, enough to tell that it was not written since: an edit changes its ctime (which no
 * one can set) and usually its size and mtime; a file replaced by rename has another inode.
 */
export interface FileStamp {
  readonly size: number;
  readonly mtimeMs: number;
  readonly ctimeMs: number;
  readonly ino: number;
  readonly dev: number;
}

/**
 * The file's stamp (through symbolic links); 'gone' when it no longer exists; undefined when stat fails otherwise
 * (the read that follows says why). A write after this stat within the same timestamp tick leaves the stamp as it
 * was: the file source reads a file a watch event named whatever its stamp, and the event of that write comes
 * after it.
 */
export async function fileStamp(path: string): Promise<FileStamp | 'gone' | undefined> {
  try {
    // Milliseconds as a double keep a quarter of a microsecond at today's dates: finer than Linux's file clock ticks.
    const s = await stat(path);
    return { size: s.size, mtimeMs: s.mtimeMs, ctimeMs: s.ctimeMs, ino: s.ino, dev: s.dev };
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'gone' : undefined;
  }
}

export function sameStamp(a: FileStamp, b: FileStamp): boolean {
  return (
    a.size === b.size &&
    a.mtimeMs === b.mtimeMs &&
    a.ctimeMs === b.ctimeMs &&
    a.ino === b.ino &&
    a.dev === b.dev
  );
}

/** A file system error in words, without a stack: `permission denied (EACCES)`. */
export function fsReason(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  const words: Record<string, string> = {
    ENOENT: 'no such file or folder',
    ENOTDIR: 'not a folder',
    EISDIR: 'is a folder',
    EACCES: 'permission denied',
    EPERM: 'operation not permitted',
    ELOOP: 'too many symbolic links',
  };
  if (code !== undefined) return `${words[code] ?? 'error'} (${code})`;
  return error instanceof Error ? error.message : String(error);
}

/** The manifest files at the top of `dir` (as `kubectl apply -f DIR`), by name. */
export async function listManifestFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const files: string[] = [];
  for (const entry of entries) {
    if (!MANIFEST_FILE.test(entry.name) || entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    if (entry.isFile()) files.push(path);
    else if (entry.isSymbolicLink()) {
      const target = await stat(path).catch(() => undefined);
      if (target?.isFile()) files.push(path);
    }
  }
  return files.sort();
}
