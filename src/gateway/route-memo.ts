import { sameJsonValue } from '../snapshot/json-object.ts';
import type { GRPCRoute, HTTPRoute, ResourceKind } from '../snapshot/resources.ts';
import type { Snapshot } from '../snapshot/snapshot.ts';
import type { TranslateOptions } from './options.ts';

/** What a route's translation reads besides the route itself: every kind but these, and the options. */
const ROUTE_KINDS: ReadonlySet<ResourceKind> = new Set<ResourceKind>(['HTTPRoute', 'GRPCRoute']);

interface Kept {
  readonly world: object;
  readonly outcome: unknown;
}

/**
 * Each route's translation kept from one translate() to the next (issue 45): a route object translated before,
 * while no other kind of object and no option has changed since, gives the very outcome it gave then. An edit of
 * one route among 10,000 then translates that one; the result's unchanged parts are the same objects, so the
 * translation thread's delta (controller/result-delta.ts) finds them by identity and the thread allocates little.
 *
 * Sound because a route's outcome reads only the route, the snapshot's other kinds and the options: a snapshot
 * made from the last one by Snapshot.withChanges shares every unchanged kind's map, so "no other kind changed" is
 * one identity check per kind; anything else (a new snapshot, a changed option, a function option that is not the
 * same function) starts a new world in which nothing kept is used.
 */
export class TranslationMemo {
  #snapshot: Snapshot | undefined;
  #options: TranslateOptions | undefined;
  #world: object = {};
  readonly #steps = new Map<string, WeakMap<HTTPRoute | GRPCRoute, Kept>>();

  /** Called by translate() before any route: whether what was kept may be used for this snapshot. */
  begin(snapshot: Snapshot, options: TranslateOptions): void {
    const last = this.#snapshot;
    const lastOptions = this.#options;
    if (last === undefined || lastOptions === undefined || !sameWorld(last, snapshot, lastOptions, options))
      this.#world = {};
    this.#snapshot = snapshot;
    this.#options = options;
  }

  /**
   * The outcome `step` gave for `route` in this world, or `translate()`'s (kept; one that throws is not). Each
   * step names its own outcomes, whose type it alone decides.
   */
  route<Outcome>(step: string, route: HTTPRoute | GRPCRoute, translate: () => Outcome): Outcome {
    let kept = this.#steps.get(step);
    if (kept === undefined) {
      kept = new WeakMap();
      this.#steps.set(step, kept);
    }
    const found = kept.get(route);
    if (found !== undefined && found.world === this.#world) return found.outcome as Outcome;
    const outcome = translate();
    kept.set(route, { world: this.#world, outcome });
    return outcome;
  }
}

function sameWorld(
  last: Snapshot,
  next: Snapshot,
  lastOptions: TranslateOptions,
  options: TranslateOptions,
): boolean {
  for (const kind of [...last.kinds(), ...next.kinds()])
    if (!ROUTE_KINDS.has(kind) && last.byKey(kind) !== next.byKey(kind)) return false;
  return sameOptions(lastOptions, options);
}

/** Options as data; a function option only when it is the same function. */
function sameOptions(a: TranslateOptions, b: TranslateOptions): boolean {
  if (a === b) return true;
  const keys = Object.keys(a) as (keyof TranslateOptions)[];
  if (keys.length !== Object.keys(b).length) return false;
  for (const key of keys) {
    const x: unknown = a[key];
    const y: unknown = b[key];
    if (x === y) continue;
    if (typeof x === 'function' || typeof y === 'function' || !sameJsonValue(x, y)) return false;
  }
  return true;
}
