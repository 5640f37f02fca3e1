/**
 * Isolates one object's translation: an unexpected error (a bug, or malformed input that no validation
 * caught) costs only that object, never the whole configuration. The caller turns a failure into a
 * condition on the object and a problem entry.
 */
export type Guarded<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly message: string };

export function guarded<T>(fn: () => T): Guarded<T> {
  try {
    return { ok: true, value: fn() };
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    return { ok: false, message: `translation failed: ${detail}` };
  }
}

/** `Kind namespace/name`, how problems name an object. */
export function describeObject(obj: {
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly namespace?: string };
}): string {
  const ns = obj.metadata.namespace ? `${obj.metadata.namespace}/` : '';
  return `${obj.kind} ${ns}${obj.metadata.name}`;
}
