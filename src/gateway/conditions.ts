import type { Condition } from '../snapshot/resources.ts';

/** metadata.generation, or 1 for objects that never went through an API server (it starts counting at 1). */
export function generationOf(obj: { readonly metadata: { readonly generation?: number } }): number {
  return obj.metadata.generation ?? 1;
}

/**
 * A status condition as the API server stores it. lastTransitionTime is left to the status writer:
 * translation is pure and has no clock.
 */
export function condition(
  type: string,
  ok: boolean,
  reason: string,
  message: string,
  observedGeneration: number,
): Condition {
  return { type, status: ok ? 'True' : 'False', reason, message, observedGeneration };
}

/** A problem found while translating: the reason is the Gateway API condition reason it will surface as. */
export interface Problem<Reason extends string = string> {
  readonly reason: Reason;
  readonly message: string;
}
