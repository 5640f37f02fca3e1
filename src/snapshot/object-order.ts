/**
 * The orders objects are listed in wherever output must not depend on input order (tables, statuses, dumps).
 */

/** Code-unit order, not localeCompare: the same on every machine, and no ICU collator loaded for it. */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Older `creationTimestamp` first; an object without one counts as the newest (a file not yet applied anywhere).
 * Equal or unparsable times fall back to the strings' order.
 */
export function compareCreation(a: string | undefined, b: string | undefined): number {
  if (a === b) return 0;
  if (a === undefined) return 1;
  if (b === undefined) return -1;
  return Date.parse(a) - Date.parse(b) || compareStrings(a, b);
}
