import type { AnyResource, BackendTLSPolicy, Gateway, Listener, ListenerSet } from './resources.ts';

/** The kinds whose objects name Secrets or ConfigMaps that translation reads the data of. */
export const CREDENTIAL_REFERRING_KINDS: ReadonlySet<string> = new Set([
  'Gateway',
  'ListenerSet',
  'BackendTLSPolicy',
]);

/** Secrets and ConfigMaps, by `namespace/name`, whose data translation may read. */
export interface CredentialReferences {
  readonly secrets: ReadonlySet<string>;
  readonly configMaps: ReadonlySet<string>;
}

/**
 * Every Secret and ConfigMap the given objects name where translation reads data: listener certificateRefs
 * (Gateway and ListenerSet), a Gateway's backend client certificate and frontend CA bundles, and
 * BackendTLSPolicy CA bundles (src/gateway: listener-tls.ts, backend-tls-policy-apply.ts, tls-ca-bundles.ts).
 * A superset on purpose: a reference still waiting for its ReferenceGrant, or from a Gateway of another class,
 * counts, so that the grant (or a class change) arriving later needs no fetch. Other kinds are ignored.
 */
export function credentialReferences(objects: Iterable<AnyResource>): CredentialReferences {
  const secrets = new Set<string>();
  const configMaps = new Set<string>();
  const add = (
    into: Set<string>,
    kind: string,
    from: string,
    ref: {
      readonly group?: string;
      readonly kind?: string;
      readonly name: string;
      readonly namespace?: string;
    },
  ): void => {
    // Refs of another group or kind are refused by translation (InvalidCertificateRef, InvalidKind): no data read.
    if ((ref.group ?? '') !== '' || (ref.kind ?? kind) !== kind) return;
    into.add(`${ref.namespace ?? from}/${ref.name}`);
  };
  const addListeners = (from: string, listeners: readonly Listener[] | undefined): void => {
    for (const listener of listeners ?? []) {
      for (const ref of listener.tls?.certificateRefs ?? []) add(secrets, 'Secret', from, ref);
    }
  };
  for (const obj of objects) {
    const from = obj.metadata.namespace ?? 'default';
    if (obj.kind === 'Gateway') {
      const spec = (obj as Gateway).spec;
      addListeners(from, spec?.listeners);
      const clientCertificate = spec?.tls?.backend?.clientCertificateRef;
      if (clientCertificate) add(secrets, 'Secret', from, clientCertificate);
      const frontend = spec?.tls?.frontend;
      for (const ref of frontend?.default?.validation?.caCertificateRefs ?? [])
        add(configMaps, 'ConfigMap', from, ref);
      for (const port of frontend?.perPort ?? []) {
        for (const ref of port.tls?.validation?.caCertificateRefs ?? [])
          add(configMaps, 'ConfigMap', from, ref);
      }
    } else if (obj.kind === 'ListenerSet') {
      addListeners(from, (obj as ListenerSet).spec?.listeners);
    } else if (obj.kind === 'BackendTLSPolicy') {
      // LocalObjectReferences: the policy's own namespace.
      for (const ref of (obj as BackendTLSPolicy).spec?.validation?.caCertificateRefs ?? [])
        add(configMaps, 'ConfigMap', from, ref);
    }
  }
  return { secrets, configMaps };
}
