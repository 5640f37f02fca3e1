/**
 * `Kind/namespace/name` of the object a warning is about (`Kind/name` for a cluster-scoped one): the key by which
 * a warning is replaced when only that object's part of the output is computed again.
 */
export type ObjectKey = `${string}/${string}`;

/**
 * Something in the input that translation could not act on, or degraded around: a route whose parent does not
 * exist, a backend that is missing, a policy without a target, a ServiceImport without endpoints. Never a reason
 * to fail the translation: a problem line (level warning) in /config_dump and the log, and a metric by `code`.
 */
export interface ConfigWarning {
  readonly code: string;
  /** The object the warning is about, when one object owns it. */
  readonly owner?: ObjectKey;
  /** Starts with the object it names, says why it is not acted on. */
  readonly message: string;
}
