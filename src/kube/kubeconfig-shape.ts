import { load as loadYaml } from 'js-yaml';

/**
 * What makes `text` no kubeconfig, checked before the client library reads it (which fails on an empty file with
 * `Cannot read properties of undefined`). Names the field, never quotes the file: it may hold a token.
 * `requireClusters: false` leaves an empty cluster or context list to the caller (which then names the missing
 * current cluster); an empty file is `no clusters` either way.
 */
export function kubeconfigShapeProblem(
  text: string,
  { requireClusters = true }: { readonly requireClusters?: boolean } = {},
): string | undefined {
  let doc: unknown;
  try {
    doc = loadYaml(text);
  } catch (err) {
    const { reason, mark } = err as { reason?: unknown; mark?: { line?: unknown } };
    const line = typeof mark?.line === 'number' ? ` at line ${mark.line + 1}` : '';
    return `YAML syntax error${line}${typeof reason === 'string' ? `: ${reason.slice(0, 80)}` : ''}`;
  }
  if (doc === undefined || doc === null) return 'no clusters';
  if (typeof doc !== 'object' || Array.isArray(doc)) return 'not a mapping of clusters, users and contexts';
  const config = doc as Record<string, unknown>;
  const clusters = config.clusters;
  const noClusters =
    clusters === undefined || clusters === null || (Array.isArray(clusters) && clusters.length === 0);
  if (noClusters && requireClusters) return 'no clusters';
  for (const field of ['clusters', 'users', 'contexts'] as const) {
    const list = config[field];
    if (list === undefined || list === null) continue;
    if (!Array.isArray(list)) return `${field} is not a list`;
    const inner = field.slice(0, -1);
    for (const [i, item] of list.entries()) {
      if (typeof item !== 'object' || item === null || Array.isArray(item))
        return `${field}[${i}] is not a mapping`;
      const entry = item as Record<string, unknown>;
      if (typeof entry.name !== 'string' || entry.name === '') return `${field}[${i}] has no name`;
      const body = entry[inner];
      if (field !== 'users' && (typeof body !== 'object' || body === null || Array.isArray(body)))
        return `${field}[${i}].${inner} is not a mapping`;
    }
  }
  if (requireClusters && (config.contexts === undefined || config.contexts === null)) return 'no contexts';
  return undefined;
}
