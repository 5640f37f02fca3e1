import { createPrivateKey, X509Certificate } from 'node:crypto';
import {
  type BackendCluster,
  type BackendTls,
  backendOwner,
  type ListenerConfig,
  type ListenerGroup,
  type RouteEntry,
  type RouteTable,
  type WeightedBackend,
} from '../ir/route-table.ts';
import type { GatewayStatus, StatusUpdate } from '../ir/status.ts';
import type { Condition, Gateway } from '../snapshot/resources.ts';
import type { Snapshot } from '../snapshot/snapshot.ts';
import { resolveBackendTlsPolicies } from './backend-tls-policy.ts';
import { condition, type Problem } from './conditions.ts';
import { GATEWAY_GROUP, namespaceOf } from './defaults.ts';
import { hasInsecureFrontendValidation } from './listener-tls.ts';
import type { TranslateOptions } from './options.ts';
import { isReferenceAllowed } from './reference-grants.ts';

interface Result {
  readonly table: RouteTable;
  readonly statuses: readonly StatusUpdate[];
}

type ClientCertificate = NonNullable<BackendTls['clientCertificate']>;

/**
 * Applies BackendTLSPolicies and Gateway backend client certificates to a translated table: backends a
 * policy targets get `tls` (a Gateway with `spec.tls.backend.clientCertificateRef` gets its own copy of each
 * TLS backend, carrying that certificate), backends of an invalid policy become invalid targets (500, never
 * plain text), and the policies' and Gateways' statuses are added. Without policies or client certificates
 * the result is returned as it is.
 */
export function applyBackendTls<R extends Result>(
  result: R,
  snapshot: Snapshot,
  options: TranslateOptions,
): R {
  const gateways = result.statuses
    .filter((u) => u.kind === 'Gateway')
    .map((u) => snapshot.get('Gateway', u.namespace, u.name))
    .filter((g): g is Gateway => g !== undefined);
  const clientCerts = new Map<
    string,
    ClientCertificate | Problem<'InvalidClientCertificateRef' | 'RefNotPermitted'>
  >();
  for (const gateway of gateways) {
    const ref = gateway.spec?.tls?.backend?.clientCertificateRef;
    if (ref)
      clientCerts.set(
        `${namespaceOf(gateway)}/${gateway.metadata.name}`,
        resolveClientCertificate(snapshot, gateway, ref),
      );
  }
  const insecure = gateways.filter(hasInsecureFrontendValidation);
  if (snapshot.list('BackendTLSPolicy').length === 0 && clientCerts.size === 0 && insecure.length === 0) {
    return result;
  }
  const policies = resolveBackendTlsPolicies(snapshot, options);
  const backends: Record<string, BackendCluster> = {};
  const invalid = new Map<string, string>();
  for (const [id, cluster] of Object.entries(result.table.backends)) {
    const applied = policies.forBackend(cluster);
    if (applied === undefined) backends[id] = cluster;
    else if (applied.verdict.ok) backends[id] = { ...cluster, tls: applied.verdict.tls };
    else
      invalid.set(
        id,
        `BackendTLSPolicy ${applied.policy} is not accepted: ${applied.verdict.accepted.message}`,
      );
  }
  /** The Gateways that route to each backend owner, for the policies' ancestors. */
  const users = new Map<string, Set<string>>();
  const mapBackends = (list: readonly WeightedBackend[], gateway: string | undefined): WeightedBackend[] =>
    list.map((weighted) => {
      const target = weighted.target;
      if (target.kind !== 'Backend') return weighted;
      const used = result.table.backends[target.id];
      if (gateway !== undefined && used !== undefined) {
        const owner = backendOwner(used);
        const set = users.get(owner) ?? new Set<string>();
        set.add(gateway);
        users.set(owner, set);
      }
      const reason = invalid.get(target.id);
      if (reason !== undefined) return { ...weighted, target: { kind: 'Invalid', reason } };
      const cluster = backends[target.id];
      const certificate = gateway === undefined ? undefined : clientCerts.get(gateway);
      if (cluster?.tls === undefined || certificate === undefined || !('certPem' in certificate))
        return weighted;
      const variant = `${target.id}#client=${certificate.secret}`;
      backends[variant] ??= {
        ...cluster,
        id: variant,
        tls: { ...cluster.tls, clientCertificate: certificate },
      };
      return { ...weighted, target: { kind: 'Backend', id: variant } };
    });
  const mapEntries = (routes: readonly RouteEntry[], gateway: string | undefined): RouteEntry[] =>
    routes.map((entry) => ({
      ...entry,
      action: { ...entry.action, backends: mapBackends(entry.action.backends, gateway) },
    }));
  const mapListeners = <Group extends ListenerGroup>(
    group: Group,
    gatewayOf: (listener: ListenerConfig) => string | undefined,
  ): Group => ({
    ...group,
    listeners: group.listeners.map((listener) => ({
      ...listener,
      virtualHosts: listener.virtualHosts.map((vhost) => ({
        ...vhost,
        routes: mapEntries(vhost.routes, gatewayOf(listener)),
      })),
    })),
  });
  const table: RouteTable = {
    ...result.table,
    ports: result.table.ports.map((port) => mapListeners(port, (listener) => listener.gateway)),
    backends,
    ...(result.table.tlsPorts
      ? {
          tlsPorts: result.table.tlsPorts.map((port) => ({
            ...port,
            listeners: port.listeners.map((listener) => ({
              ...listener,
              routes: listener.routes.map((r) => ({
                ...r,
                backends: mapBackends(r.backends, listener.gateway),
              })),
            })),
          })),
        }
      : {}),
    ...(result.table.clusterset
      ? {
          clusterset: {
            // No Gateway: clusterset listeners present no backend client certificate.
            ports: result.table.clusterset.ports.map((port) => mapListeners(port, () => undefined)),
          },
        }
      : {}),
  };
  const statuses = result.statuses.map((update) => {
    if (update.kind !== 'Gateway') return update;
    const key = `${update.namespace}/${update.name}`;
    const extra: Condition[] = [];
    const certificate = clientCerts.get(key);
    if (certificate !== undefined) {
      extra.push(
        'certPem' in certificate
          ? condition(
              'ResolvedRefs',
              true,
              'ResolvedRefs',
              'backend client certificate is resolved',
              update.generation,
            )
          : condition('ResolvedRefs', false, certificate.reason, certificate.message, update.generation),
      );
    }
    if (insecure.some((g) => `${namespaceOf(g)}/${g.metadata.name}` === key)) {
      extra.push(
        condition(
          'InsecureFrontendValidationMode',
          true,
          'ConfigurationChanged',
          'frontend validation mode AllowInsecureFallback lets clients without a valid certificate in',
          update.generation,
        ),
      );
    }
    if (extra.length === 0) return update;
    const status = update.status as GatewayStatus;
    return { ...update, status: { ...status, conditions: [...status.conditions, ...extra] } };
  });
  const policyStatuses = policies.statuses(users, options.controllerName);
  return { ...result, table, statuses: [...statuses, ...policyStatuses] };
}

function resolveClientCertificate(
  snapshot: Snapshot,
  gateway: Gateway,
  ref: {
    readonly group?: string;
    readonly kind?: string;
    readonly name: string;
    readonly namespace?: string;
  },
): ClientCertificate | Problem<'InvalidClientCertificateRef' | 'RefNotPermitted'> {
  const gatewayNamespace = namespaceOf(gateway);
  const namespace = ref.namespace ?? gatewayNamespace;
  const where = `spec.tls.backend.clientCertificateRef ${ref.group || 'core'}/${ref.kind ?? 'Secret'} ${namespace}/${ref.name}`;
  if ((ref.group ?? '') !== '' || (ref.kind ?? 'Secret') !== 'Secret') {
    return { reason: 'InvalidClientCertificateRef', message: `${where}: only core Secrets are supported` };
  }
  const allowed = isReferenceAllowed(
    snapshot,
    { group: GATEWAY_GROUP, kind: 'Gateway', namespace: gatewayNamespace },
    { group: '', kind: 'Secret', namespace, name: ref.name },
  );
  if (!allowed) return { reason: 'RefNotPermitted', message: `${where}: no ReferenceGrant allows it` };
  const secret = snapshot.get('Secret', namespace, ref.name);
  if (!secret) return { reason: 'InvalidClientCertificateRef', message: `${where}: Secret not found` };
  const certPem = decode(secret.data?.['tls.crt']);
  const keyPem = decode(secret.data?.['tls.key']);
  try {
    if (!certPem || !keyPem) throw new Error('missing');
    new X509Certificate(certPem);
    createPrivateKey(keyPem);
  } catch {
    // The message never carries the key or why it failed to parse (that could quote key material).
    return {
      reason: 'InvalidClientCertificateRef',
      message: `${where}: tls.crt and tls.key must hold a PEM certificate and key`,
    };
  }
  return { secret: `${namespace}/${ref.name}`, certPem, keyPem };
}

function decode(value: string | undefined): string | undefined {
  if (!value) return undefined;
  const text = Buffer.from(value, 'base64').toString('utf8');
  return text === '' ? undefined : text;
}
