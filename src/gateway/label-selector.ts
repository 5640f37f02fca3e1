import type { LabelSelector } from '../snapshot/resources.ts';
import type { Snapshot } from '../snapshot/snapshot.ts';

/** The label every API server (>= 1.22) adds to a Namespace; objects read from YAML lack it, so we add it. */
export const NAMESPACE_NAME_LABEL = 'kubernetes.io/metadata.name';

/** Labels of a Namespace as an API server would serve them, even when the Namespace object is absent. */
export function namespaceLabels(snapshot: Snapshot, namespace: string): Readonly<Record<string, string>> {
  const labels = snapshot.get('Namespace', undefined, namespace)?.metadata.labels ?? {};
  return { ...labels, [NAMESPACE_NAME_LABEL]: namespace };
}

/** metav1.LabelSelector semantics: every matchLabels pair and every expression must hold; `{}` matches all. */
export function matchesLabelSelector(
  selector: LabelSelector,
  labels: Readonly<Record<string, string>>,
): boolean {
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    if (labels[key] !== value) return false;
  }
  for (const expression of selector.matchExpressions ?? []) {
    const has = Object.hasOwn(labels, expression.key);
    const values = expression.values ?? [];
    switch (expression.operator) {
      case 'In':
        if (!has || !values.includes(labels[expression.key] as string)) return false;
        break;
      case 'NotIn':
        if (has && values.includes(labels[expression.key] as string)) return false;
        break;
      case 'Exists':
        if (!has) return false;
        break;
      case 'DoesNotExist':
        if (has) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}
