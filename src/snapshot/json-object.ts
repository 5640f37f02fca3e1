/** A JSON object (not null, not an array): the shape every API server response and object has. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
