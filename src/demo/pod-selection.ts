import type { DemoPod } from './topology.ts';

/** The fields `/demo/stop` and `/demo/start` select pods by; several narrow the selection (all must match). */
export const POD_SELECTORS = ['pod', 'zone', 'cluster', 'service'] as const;
type PodSelector = (typeof POD_SELECTORS)[number];

const USAGE = `select pods with ${POD_SELECTORS.map((field) => `?${field}=`).join(', ')} (several narrow the selection)`;

export type PodSelection =
  | { readonly kind: 'pods'; readonly pods: readonly DemoPod[] }
  | { readonly kind: 'error'; readonly status: 400 | 404; readonly message: string };

/**
 * The pods a `/demo/stop` or `/demo/start` query names. A zone or cluster means every pod in it, of every service,
 * as an outage would; `start` with the same query brings back exactly what `stop` took. A value that names nothing
 * is a 404 naming it, so a typo is never mistaken for a change.
 */
export function selectPods(pods: readonly DemoPod[], query: URLSearchParams): PodSelection {
  const unknown = [...query.keys()].filter((key) => !(POD_SELECTORS as readonly string[]).includes(key));
  if (unknown.length > 0)
    return { kind: 'error', status: 400, message: `unknown selector ${unknown[0]}: ${USAGE}` };
  const wanted = new Map<PodSelector, string>();
  for (const field of POD_SELECTORS) {
    const values = query.getAll(field);
    if (values.length > 1) return { kind: 'error', status: 400, message: `${field} given twice: ${USAGE}` };
    const value = values[0];
    if (value === undefined) continue;
    if (!pods.some((pod) => pod[field] === value)) {
      const known = [...new Set(pods.map((pod) => pod[field]))].join(', ');
      return {
        kind: 'error',
        status: 404,
        message: `no ${field} named "${value}" in the demo (there are: ${known})`,
      };
    }
    wanted.set(field, value);
  }
  if (wanted.size === 0) return { kind: 'error', status: 400, message: USAGE };
  const selected = pods.filter((pod) => [...wanted].every(([field, value]) => pod[field] === value));
  if (selected.length === 0) {
    const asked = [...wanted].map(([field, value]) => `${field}=${value}`).join(' and ');
    return { kind: 'error', status: 404, message: `no demo pod has ${asked}` };
  }
  return { kind: 'pods', pods: selected };
}
