import { createPrivateKey, X509Certificate } from 'node:crypto';
import type { TlsConfig } from '../ir/route-table.ts';
import type { FrontendTLSValidation, Gateway, Listener, ListenerSet } from '../snapshot/resources.ts';
import type { Snapshot } from '../snapshot/snapshot.ts';
import type { Problem } from './conditions.ts';
import { GATEWAY_GROUP } from './defaults.ts';
import { isReferenceAllowed } from './reference-grants.ts';
import { resolveCaBundle } from './tls-ca-bundles.ts';

export type CertificateReason = 'InvalidCertificateRef' | 'RefNotPermitted';

export type CertificateResolution =
  | { readonly ok: true; readonly tls: TlsConfig }
  | ({ readonly ok: false } & Problem<CertificateReason>);

/**
 * Listener.tls.certificateRefs for TLS termination: core support is a `kubernetes.io/tls` Secret (group "",
 * kind Secret); another namespace needs a ReferenceGrant from the Gateway's namespace. Every ref must resolve:
 * the first failure makes the listener ResolvedRefs=False (InvalidCertificateRef or RefNotPermitted).
 */
export function resolveListenerCertificates(
  snapshot: Snapshot,
  gateway: Gateway | ListenerSet,
  listener: Listener,
  listenerIndex: number,
): CertificateResolution {
  // A ListenerSet's certificate refs are its own: ReferenceGrants name it (kind ListenerSet) and its namespace.
  const gatewayNamespace = gateway.metadata.namespace ?? 'default';
  const refs = listener.tls?.certificateRefs ?? [];
  const field = `spec.listeners[${listenerIndex}].tls.certificateRefs`;
  if (refs.length === 0) {
    return fail('InvalidCertificateRef', `${field}: an HTTPS listener needs at least one certificateRef`);
  }
  const certificates: TlsConfig['certificates'][number][] = [];
  for (const [i, ref] of refs.entries()) {
    const group = ref.group ?? '';
    const kind = ref.kind ?? 'Secret';
    const namespace = ref.namespace ?? gatewayNamespace;
    const where = `${field}[${i}] ${group === '' ? 'core' : group}/${kind} ${namespace}/${ref.name}`;
    if (group !== '' || kind !== 'Secret') {
      return fail('InvalidCertificateRef', `${where}: only core Secrets are supported`);
    }
    const allowed = isReferenceAllowed(
      snapshot,
      { group: GATEWAY_GROUP, kind: gateway.kind, namespace: gatewayNamespace },
      { group: '', kind: 'Secret', namespace, name: ref.name },
    );
    if (!allowed) {
      return fail('RefNotPermitted', `${where}: no ReferenceGrant in ${namespace} allows it`);
    }
    const secret = snapshot.get('Secret', namespace, ref.name);
    if (!secret) return fail('InvalidCertificateRef', `${where}: Secret not found`);
    const certPem = decodeBase64(secret.data?.['tls.crt']);
    const keyPem = decodeBase64(secret.data?.['tls.key']);
    if (!certPem || !keyPem) {
      return fail('InvalidCertificateRef', `${where}: Secret lacks tls.crt or tls.key`);
    }
    const invalid = pemProblem(certPem, keyPem);
    if (invalid) return fail('InvalidCertificateRef', `${where}: ${invalid}`);
    certificates.push({ secret: `${namespace}/${ref.name}`, certPem, keyPem });
  }
  // Client-certificate validation is per port of the Gateway (spec.tls.frontend); a ListenerSet's listeners
  // share their parent Gateway's ports, so they get its settings.
  const owner = gateway.kind === 'Gateway' ? gateway : parentGatewayOf(snapshot, gateway);
  const validation = owner ? frontendValidation(snapshot, owner, listener.port) : undefined;
  return {
    ok: true,
    tls: validation?.ok ? { certificates, clientValidation: validation.clientValidation } : { certificates },
  };
}

function parentGatewayOf(snapshot: Snapshot, set: ListenerSet): Gateway | undefined {
  const ref = set.spec?.parentRef;
  if (!ref) return undefined;
  return snapshot.get('Gateway', ref.namespace ?? set.metadata.namespace ?? 'default', ref.name);
}

function fail(reason: CertificateReason, message: string): CertificateResolution {
  return { ok: false, reason, message };
}

function decodeBase64(value: string | undefined): string | undefined {
  if (!value) return undefined;
  const text = Buffer.from(value, 'base64').toString('utf8');
  return text === '' ? undefined : text;
}

/** Parsing is pure (no I/O); it catches what a TLS server would reject at load time. */
function pemProblem(certPem: string, keyPem: string): string | undefined {
  try {
    new X509Certificate(certPem);
  } catch {
    return 'tls.crt is not a PEM certificate';
  }
  try {
    createPrivateKey(keyPem);
  } catch {
    return 'tls.key is not a PEM private key';
  }
  return undefined;
}

const TLS_ROUTE = { group: GATEWAY_GROUP, kind: 'TLSRoute' } as const;
const TCP_ROUTE = { group: GATEWAY_GROUP, kind: 'TCPRoute' } as const;

type TlsListenerFields = {
  readonly protocol: 'TLS' | 'HTTPS';
  readonly supportedKinds: readonly { readonly group: string; readonly kind: string }[];
  readonly tls: TlsConfig | undefined;
  readonly unsupported: Problem<'UnsupportedProtocol' | 'NoValidCACertificate'> | undefined;
  readonly invalidRefs:
    | Problem<
        CertificateReason | 'InvalidRouteKinds' | 'InvalidCACertificateRef' | 'InvalidCACertificateKind'
      >
    | undefined;
};

/**
 * Listeners of protocol TLS (TLSRoute; Passthrough needs no certificate, Terminate the listener's), and
 * HTTPS listeners whose frontend client-certificate validation cannot be resolved (Accepted=False,
 * NoValidCACertificate: a listener that should check client certificates must not serve without). Other
 * listeners: undefined, validated by listeners.ts.
 */
export function validateTlsListener(
  snapshot: Snapshot,
  gateway: Gateway,
  listener: Listener,
  index: number,
): TlsListenerFields | undefined {
  if (listener.protocol === 'HTTPS') {
    const validation = frontendValidation(snapshot, gateway, listener.port);
    if (validation === undefined || validation.ok) return undefined;
    return {
      protocol: 'HTTPS',
      supportedKinds: [],
      tls: undefined,
      unsupported: { reason: 'NoValidCACertificate', message: validation.message },
      invalidRefs: { reason: validation.reason, message: validation.message },
    };
  }
  const field = `spec.listeners[${index}]`;
  const requested = listener.allowedRoutes?.kinds;
  const terminate = (listener.tls?.mode ?? 'Terminate') === 'Terminate';
  // A Terminate listener relays plain TCP once TLS ends here, so it may also serve TCPRoutes when its
  // allowedRoutes.kinds names them (the default stays TLSRoute alone).
  const servable = terminate ? ['TLSRoute', 'TCPRoute'] : ['TLSRoute'];
  const named = (k: { group?: string; kind: string }, kind: string) =>
    (k.group ?? GATEWAY_GROUP) === GATEWAY_GROUP && k.kind === kind;
  const rejected = (requested ?? [])
    .filter((k) => !servable.some((kind) => named(k, kind)))
    .map((k) => `${k.group ?? GATEWAY_GROUP}/${k.kind}`);
  const supportedKinds =
    requested === undefined
      ? [TLS_ROUTE]
      : [TLS_ROUTE, TCP_ROUTE].filter(
          (kind) => requested.some((k) => named(k, kind.kind)) && servable.includes(kind.kind),
        );
  let invalidRefs: TlsListenerFields['invalidRefs'] =
    rejected.length > 0
      ? {
          reason: 'InvalidRouteKinds',
          message: `${field}.allowedRoutes.kinds: ${rejected.join(', ')} not supported; supported: ${servable.map((k) => `${GATEWAY_GROUP}/${k}`).join(', ')}`,
        }
      : undefined;
  let tls: TlsConfig | undefined;
  if (terminate) {
    const certificates = resolveListenerCertificates(snapshot, gateway, listener, index);
    if (certificates.ok) tls = { certificates: certificates.tls.certificates };
    else invalidRefs = { reason: certificates.reason, message: certificates.message };
  }
  return { protocol: 'TLS', supportedKinds, tls, unsupported: undefined, invalidRefs };
}

type FrontendValidation =
  | { readonly ok: true; readonly clientValidation: NonNullable<TlsConfig['clientValidation']> }
  | {
      readonly ok: false;
      readonly reason: 'InvalidCACertificateRef' | 'InvalidCACertificateKind' | 'RefNotPermitted';
      readonly message: string;
    };

/** Gateway.spec.tls.frontend for a port: a perPort entry for the port, else the default; undefined: none. */
export function frontendValidation(
  snapshot: Snapshot,
  gateway: Gateway,
  port: number,
): FrontendValidation | undefined {
  const frontend = gateway.spec?.tls?.frontend;
  const perPortIndex = (frontend?.perPort ?? []).findIndex((p) => p.port === port);
  const validation: FrontendTLSValidation | undefined =
    perPortIndex >= 0 ? frontend?.perPort?.[perPortIndex]?.tls?.validation : frontend?.default?.validation;
  if (validation === undefined) return undefined;
  const field =
    perPortIndex >= 0
      ? `spec.tls.frontend.perPort[${perPortIndex}].tls.validation.caCertificateRefs`
      : 'spec.tls.frontend.default.validation.caCertificateRefs';
  const bundle = resolveCaBundle(snapshot, validation.caCertificateRefs ?? [], field, {
    kind: 'Gateway',
    namespace: gateway.metadata.namespace ?? 'default',
  });
  if (!bundle.ok) {
    return {
      ok: false,
      reason: bundle.reason === 'InvalidKind' ? 'InvalidCACertificateKind' : bundle.reason,
      message: bundle.message,
    };
  }
  return {
    ok: true,
    clientValidation: { caPem: bundle.caPem, mode: validation.mode ?? 'AllowValidOnly' },
  };
}

/** True when some frontend validation lets clients without a valid certificate in (InsecureFrontendValidationMode). */
export function hasInsecureFrontendValidation(gateway: Gateway): boolean {
  const frontend = gateway.spec?.tls?.frontend;
  return (
    frontend?.default?.validation?.mode === 'AllowInsecureFallback' ||
    (frontend?.perPort ?? []).some((p) => p.tls?.validation?.mode === 'AllowInsecureFallback')
  );
}
