import type { PathMatch } from '../../ir/route-table.ts';
import type { LinearRegex } from '../../net/linear-regex.ts';
import { compileAnchoredRegex, type MatchableRequest, type MatchPredicate } from './match-predicates.ts';

/** One compiled (rule, match) pair; `order` is its position in the IR's precedence order. */
export interface IndexedEntry<A> {
  readonly order: number;
  readonly predicate: MatchPredicate;
  readonly action: A;
}

/**
 * Route entries of one virtual host, indexed so lookup cost does not grow with the number of routes:
 * Exact paths in a hash map, PathPrefixes in a hash map keyed by the normalised prefix (looked up once per
 * path segment boundary), regular expressions checked in order. Each bucket keeps IR order, so the first
 * entry whose predicate passes in a bucket is that bucket's best; the lowest `order` across buckets wins,
 * which is exactly "first match in IR order".
 */
export class RouteIndex<A> {
  readonly #exact = new Map<string, IndexedEntry<A>[]>();
  /** Keys: prefix without trailing slash; '' is the root prefix `/`. */
  readonly #prefix = new Map<string, IndexedEntry<A>[]>();
  readonly #regex: { readonly regex: LinearRegex; readonly entry: IndexedEntry<A> }[] = [];
  #size = 0;

  get size(): number {
    return this.#size;
  }

  /** Entries must be added in IR order. Throws on an invalid regular expression. */
  add(path: PathMatch, predicate: MatchPredicate, action: A): void {
    const entry: IndexedEntry<A> = { order: this.#size, predicate, action };
    if (path.kind === 'RegularExpression') {
      this.#regex.push({ regex: compileAnchoredRegex(path.value), entry });
    } else if (path.kind === 'Exact') {
      push(this.#exact, path.value, entry);
    } else {
      push(this.#prefix, normalisePrefix(path.value), entry);
    }
    this.#size++;
  }

  lookup(view: MatchableRequest): IndexedEntry<A> | undefined {
    const path = view.path;
    let best: IndexedEntry<A> | undefined;
    let bestOrder = Number.MAX_SAFE_INTEGER;

    const exact = this.#exact.get(path);
    if (exact !== undefined) {
      const hit = firstPassing(exact, view, bestOrder);
      if (hit !== undefined) {
        best = hit;
        bestOrder = hit.order;
      }
    }

    if (this.#prefix.size > 0) {
      // PathPrefix matches element by element: `/foo` matches `/foo`, `/foo/` and `/foo/bar`, not `/foobar`.
      let hit = this.#prefixBucket('', view, bestOrder);
      if (hit !== undefined) {
        best = hit;
        bestOrder = hit.order;
      }
      let slash = path.indexOf('/', 1);
      while (slash !== -1) {
        hit = this.#prefixBucket(path.slice(0, slash), view, bestOrder);
        if (hit !== undefined) {
          best = hit;
          bestOrder = hit.order;
        }
        slash = path.indexOf('/', slash + 1);
      }
      if (path.length > 1 && path.charCodeAt(path.length - 1) !== 47) {
        hit = this.#prefixBucket(path, view, bestOrder);
        if (hit !== undefined) {
          best = hit;
          bestOrder = hit.order;
        }
      }
    }

    for (const { regex, entry } of this.#regex) {
      if (entry.order >= bestOrder) break;
      if (regex.test(path) && entry.predicate.test(view)) {
        best = entry;
        break;
      }
    }
    return best;
  }

  #prefixBucket(key: string, view: MatchableRequest, bestOrder: number): IndexedEntry<A> | undefined {
    const bucket = this.#prefix.get(key);
    return bucket === undefined ? undefined : firstPassing(bucket, view, bestOrder);
  }
}

function push<A>(map: Map<string, IndexedEntry<A>[]>, key: string, entry: IndexedEntry<A>): void {
  const list = map.get(key);
  if (list === undefined) map.set(key, [entry]);
  else list.push(entry);
}

/** Gateway API PathPrefix: "When specified, a trailing `/` is ignored." */
export function normalisePrefix(prefix: string): string {
  let end = prefix.length;
  while (end > 0 && prefix.charCodeAt(end - 1) === 47) end--;
  return prefix.slice(0, end);
}

function firstPassing<A>(
  bucket: readonly IndexedEntry<A>[],
  view: MatchableRequest,
  bestOrder: number,
): IndexedEntry<A> | undefined {
  for (const entry of bucket) {
    if (entry.order >= bestOrder) return undefined;
    if (entry.predicate.always || entry.predicate.test(view)) return entry;
  }
  return undefined;
}
