/**
 * What to do with `%2F` and `%5C` (an encoded `/` or `\`) in a path, as Envoy's
 * `path_with_escaped_slashes_action`: keep them encoded (the default), refuse the request, or decode them
 * and then redirect the client to, or forward, the result. `%00` is never decoded: refused by `reject`,
 * kept encoded otherwise.
 */
export type EscapedSlashesAction = 'keep' | 'reject' | 'unescape-and-redirect' | 'unescape-and-forward';

/** How request paths are normalized before route matching; every part can be turned off by a flag. */
export interface PathNormalization {
  /**
   * RFC 3986: remove dot segments (§5.2.4), decode percent-encoded unreserved characters and upper-case the
   * hex of the other encodings (§6.2.2), and read a backslash as a slash (Envoy's `normalize_path`).
   */
  readonly normalize: boolean;
  /** Runs of slashes become one (Envoy's `merge_slashes`). */
  readonly mergeSlashes: boolean;
  readonly escapedSlashes: EscapedSlashesAction;
}

export const DEFAULT_PATH_NORMALIZATION: PathNormalization = {
  normalize: true,
  mergeSlashes: true,
  escapedSlashes: 'keep',
};

export type NormalizedPath =
  | { readonly kind: 'path'; readonly path: string }
  /** The client is sent to `path` with a 307 (unescape-and-redirect). */
  | { readonly kind: 'redirect'; readonly path: string }
  | { readonly kind: 'refuse'; readonly reason: string };

const SLASH = 47;
const BACKSLASH = 92;
const PERCENT = 37;
const DOT = 46;

/** True for RFC 3986 unreserved: ALPHA / DIGIT / "-" / "." / "_" / "~". */
function isUnreserved(byte: number): boolean {
  return (
    (byte >= 0x61 && byte <= 0x7a) ||
    (byte >= 0x41 && byte <= 0x5a) ||
    (byte >= 0x30 && byte <= 0x39) ||
    byte === 0x2d ||
    byte === 0x2e ||
    byte === 0x5f ||
    byte === 0x7e
  );
}

function hexValue(code: number): number {
  if (code >= 48 && code <= 57) return code - 48;
  const lower = code | 0x20;
  if (lower >= 97 && lower <= 102) return lower - 87;
  return -1;
}

/** The byte of a `%XY` at `i`, or -1 when it is not a valid encoding. */
function encodedByte(path: string, i: number): number {
  if (i + 2 >= path.length) return -1;
  const high = hexValue(path.charCodeAt(i + 1));
  const low = hexValue(path.charCodeAt(i + 2));
  return high < 0 || low < 0 ? -1 : high * 16 + low;
}

/**
 * An overlong UTF-8 encoding (`%C0%AE` for `.`, `%E0%80%AE`, `%F0%80%80%AE`): never valid UTF-8 (RFC 3629 §3),
 * only ever sent to slip a dot or a slash past a check into a decoder that accepts it.
 */
function isOverlong(path: string, i: number, lead: number): boolean {
  if (lead !== 0xc0 && lead !== 0xc1 && lead !== 0xe0 && lead !== 0xf0) return false;
  if (path.charCodeAt(i + 3) !== PERCENT) return false;
  const next = encodedByte(path, i + 3);
  if (next < 0x80 || next > 0xbf) return false;
  if (lead === 0xe0) return next < 0xa0;
  if (lead === 0xf0) return next < 0x90;
  return true;
}

/** Whether the path can be left exactly as it is: no encoding, backslash, dot segment or repeated slash. */
function isPlain(path: string, options: PathNormalization): boolean {
  let previous = 0;
  for (let i = 0; i < path.length; i++) {
    const code = path.charCodeAt(i);
    if (code === PERCENT || code === BACKSLASH) return false;
    if (previous === SLASH && (code === DOT || (code === SLASH && options.mergeSlashes))) return false;
    previous = code;
  }
  return true;
}

const HEX = '0123456789ABCDEF';

/**
 * Normalizes the path of a request target (no query string) before route matching; the result is also what
 * is forwarded, so a backend sees the path the route matched. Envoy's order: decode and normalize, apply the
 * escaped-slashes action, then merge slashes. A path that is not origin form (`*`) is left as it is.
 *
 * Two refusals beyond Envoy (400): an overlong UTF-8 encoding, and a dot segment carrying a `;` parameter
 * (`/..;/`), which servlet containers read as `..` although RFC 3986 does not.
 */
export function normalizePath(path: string, options: PathNormalization): NormalizedPath {
  if (path.charCodeAt(0) !== SLASH || isPlain(path, options)) return { kind: 'path', path };
  const { normalize, escapedSlashes } = options;
  let unescaped = false;
  let decoded = '';
  let start = 0;
  for (let i = 0; i < path.length; i++) {
    const code = path.charCodeAt(i);
    if (code === BACKSLASH && normalize) {
      decoded += `${path.slice(start, i)}/`;
      start = i + 1;
      continue;
    }
    if (code !== PERCENT) continue;
    const byte = encodedByte(path, i);
    // A `%` that starts no valid encoding is left as it is (as Envoy's canonicalizer does).
    if (byte < 0) continue;
    let replacement: string;
    if (byte === 0x2f || byte === 0x5c || byte === 0) {
      if (escapedSlashes === 'reject') return { kind: 'refuse', reason: 'escaped slash or NUL in path' };
      if (
        byte !== 0 &&
        (escapedSlashes === 'unescape-and-redirect' || escapedSlashes === 'unescape-and-forward')
      ) {
        unescaped = true;
        replacement = byte === 0x5c && !normalize ? '\\' : '/';
      } else replacement = `%${HEX[byte >> 4]}${HEX[byte & 15]}`;
    } else if (!normalize) {
      continue;
    } else if (isUnreserved(byte)) {
      replacement = String.fromCharCode(byte);
    } else if (isOverlong(path, i, byte)) {
      return { kind: 'refuse', reason: 'overlong utf-8 in path' };
    } else {
      replacement = `%${HEX[byte >> 4]}${HEX[byte & 15]}`;
    }
    decoded += path.slice(start, i) + replacement;
    start = i + 3;
    i += 2;
  }
  decoded += path.slice(start);
  const segments = decoded.split('/');
  const out: string[] = [];
  const last = segments.length - 1;
  // segments[0] is the empty string before the leading slash.
  for (let s = 1; s <= last; s++) {
    const segment = segments[s]!;
    if (segment === '' && options.mergeSlashes && s < last) continue;
    if (normalize && (segment === '.' || segment === '..')) {
      if (segment === '..') out.pop();
      // A dot segment at the end leaves the path ending in a slash (`/a/b/..` is `/a/`).
      if (s === last) out.push('');
      continue;
    }
    if (normalize && segment.charCodeAt(0) === DOT && isDotWithParameter(segment)) {
      return { kind: 'refuse', reason: 'dot segment with a parameter in path' };
    }
    out.push(segment);
  }
  const result = `/${out.join('/')}`;
  if (unescaped && escapedSlashes === 'unescape-and-redirect') return { kind: 'redirect', path: result };
  return { kind: 'path', path: result };
}

/** `.;x` or `..;x`: a dot segment with a path parameter. */
function isDotWithParameter(segment: string): boolean {
  const semicolon = segment.indexOf(';');
  if (semicolon === -1) return false;
  const head = segment.slice(0, semicolon);
  return head === '.' || head === '..';
}
