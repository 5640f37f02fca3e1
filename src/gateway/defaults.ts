/** The API group of Gateway API kinds; the default of ParentReference.group and RouteGroupKind.group. */
export const GATEWAY_GROUP = 'gateway.networking.k8s.io';

/** Namespace of an object read without one (as kubectl would apply it). */
export function namespaceOf(obj: { readonly metadata: { readonly namespace?: string } }): string {
  return obj.metadata.namespace ?? 'default';
}

/** `namespace/name`. */
export function keyOf(obj: {
  readonly metadata: { readonly name: string; readonly namespace?: string };
}): string {
  return `${namespaceOf(obj)}/${obj.metadata.name}`;
}
