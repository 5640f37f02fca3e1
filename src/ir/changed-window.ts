/**
 * The part of a list that changed, by identity: `before[start..beforeEnd)` became `after[start..afterEnd)`, and
 * everything outside is the very same objects at the same places (positions past the window shifted by the
 * difference in length). An EndpointSlice change keeps every other endpoint the same object (src/mcs), so a
 * change of one endpoint among 50,000 is a window of one, found by pointer comparisons only.
 */
export interface ChangedWindow {
  readonly start: number;
  readonly beforeEnd: number;
  readonly afterEnd: number;
}

export function changedWindow<T>(before: readonly T[], after: readonly T[]): ChangedWindow {
  const shorter = Math.min(before.length, after.length);
  let start = 0;
  while (start < shorter && before[start] === after[start]) start++;
  let beforeEnd = before.length;
  let afterEnd = after.length;
  while (beforeEnd > start && afterEnd > start && before[beforeEnd - 1] === after[afterEnd - 1]) {
    beforeEnd--;
    afterEnd--;
  }
  return { start, beforeEnd, afterEnd };
}

/** Whether the window is empty: the lists are the same objects in the same order. */
export function unchanged(window: ChangedWindow): boolean {
  return window.start === window.beforeEnd && window.start === window.afterEnd;
}

/** The changed window of each tier index present before or after (an absent tier is an empty one). */
export function tierWindows<T>(
  before: readonly (readonly T[])[],
  after: readonly (readonly T[])[],
): ChangedWindow[] {
  const windows: ChangedWindow[] = [];
  for (let t = 0; t < Math.max(before.length, after.length); t++)
    windows.push(changedWindow(before[t] ?? [], after[t] ?? []));
  return windows;
}

/**
 * Only what changed: per tier, the endpoints of its window before and after. With keys unique within a
 * backend (src/mcs dedupes them), whatever is keyed by endpoint key changes exactly by these.
 */
export function changedTiers<T>(
  before: readonly (readonly T[])[],
  after: readonly (readonly T[])[],
): { readonly removed: T[][]; readonly added: T[][] } {
  const windows = tierWindows(before, after);
  return {
    removed: windows.map((w, t) => (before[t] ?? []).slice(w.start, w.beforeEnd)),
    added: windows.map((w, t) => (after[t] ?? []).slice(w.start, w.afterEnd)),
  };
}
