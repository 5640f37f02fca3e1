import type { AnyResource, Gateway, ListenerSet } from '../../snapshot/resources.ts';

/**
 * `namespace/name` of every Secret translation may read: the certificateRefs of Gateway and ListenerSet
 * listeners, and a Gateway's backend client certificate. Whether a cross-namespace ref is allowed (its
 * ReferenceGrant) is translation's question; its Secret is kept either way, so that a grant added later needs no
 * fetch.
 */
export function referencedSecrets(objects: Iterable<AnyResource>): Set<string> {
  const keys = new Set<string>();
  const add = (
    ref: {
      readonly group?: string;
      readonly kind?: string;
      readonly namespace?: string;
      readonly name: string;
    },
    namespace: string,
  ): void => {
    if ((ref.group ?? '') === '' && (ref.kind ?? 'Secret') === 'Secret')
      keys.add(`${ref.namespace ?? namespace}/${ref.name}`);
  };
  for (const object of objects) {
    if (object.kind !== 'Gateway' && object.kind !== 'ListenerSet') continue;
    const namespace = object.metadata.namespace ?? 'default';
    const spec = (object as Gateway | ListenerSet).spec;
    for (const listener of spec?.listeners ?? [])
      for (const ref of listener.tls?.certificateRefs ?? []) add(ref, namespace);
    if (object.kind === 'Gateway') {
      const client = (object as Gateway).spec?.tls?.backend?.clientCertificateRef;
      if (client) add(client, namespace);
    }
  }
  return keys;
}
