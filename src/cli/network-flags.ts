import type { NetworkIdentityRefs } from '../gateway/network-identity.ts';
import { NETWORK_PROPERTY } from '../mcs/networks.ts';
import { integer, optional, UsageError } from './flag-values.ts';

/** Multi-network flags (docs/multi-network.md): this cluster's network, its network gateway listener and identity. */
export const NETWORK_FLAGS = {
  network: {
    type: 'string',
    arg: 'name',
    help: `This cluster's network (the cluster property ${NETWORK_PROPERTY}); clusters on another network are reached through their network gateways. Default: the network "default", shared by every cluster that names none.`,
  },
  'network-gateway-port': {
    type: 'string',
    arg: 'n',
    help: "Serve this cluster's exported services to other networks on this port: mutual TLS, HTTP/2 CONNECT to <svc>.<ns>.svc.clusterset.local:<port> only (off by default; needs the three --network-tls files).",
  },
  'network-tls-cert': {
    type: 'string',
    arg: 'file',
    help: 'PEM certificate of this gateway for other networks; its URI SAN is spiffe://<trust-domain>/cluster/<this cluster>. Read again when it changes.',
  },
  'network-tls-key': { type: 'string', arg: 'file', help: 'PEM private key of --network-tls-cert.' },
  'network-trust-bundle': {
    type: 'string',
    arg: 'file',
    help: "PEM CA certificates other networks' gateways must chain to.",
  },
  'network-tls-secret': {
    type: 'string',
    arg: 'ns/name',
    help: 'Instead of the three files: a kubernetes.io/tls Secret (tls.crt, tls.key; its ca.crt is the trust bundle unless --network-trust-bundle-configmap names one), read through the source (watched in Kubernetes; in the manifests folder with --manifests) and taken again when it changes.',
  },
  'network-trust-bundle-configmap': {
    type: 'string',
    arg: 'ns/name',
    help: "With --network-tls-secret: the trust bundle is this ConfigMap's ca.crt (as trust-manager writes it).",
  },
  'network-cert-expiry-warning-ms': {
    type: 'string',
    arg: 'ms',
    help: 'Warn (log line, /config_dump problem, the Gateway condition NetworkCertificateValid=False/Expiring) when the network certificate expires within this. Default 604800000 (7 days).',
  },
  'network-allowed-clusters': {
    type: 'string',
    arg: 'name,...',
    help: 'Only these clusters (of this trust domain) may use the network gateway. Default: every cluster of the trust domain.',
  },
  'network-max-streams': {
    type: 'string',
    arg: 'n',
    help: 'Concurrent CONNECT streams per network gateway connection; more are refused. Default 100.',
  },
  'network-handshake-timeout-ms': {
    type: 'string',
    arg: 'ms',
    help: 'The TLS handshake on the network gateway port must finish within this. Default 10000.',
  },
  'network-idle-timeout-ms': {
    type: 'string',
    arg: 'ms',
    help: 'A network gateway connection or tunnel with no traffic this long is closed. Default 300000.',
  },
} as const;

export interface NetworkOptions {
  /** `--network`: also set as this cluster's NETWORK_PROPERTY. */
  readonly network?: string;
  readonly gatewayPort?: number;
  readonly tls?: { readonly certFile: string; readonly keyFile: string; readonly trustBundleFile: string };
  /** `--network-tls-secret` (and its trust bundle ConfigMap): the identity from objects instead of files. */
  readonly tlsObjects?: NetworkIdentityRefs;
  /** A certificate this close to its end is reported. */
  readonly certExpiryWarningMs: number;
  readonly allowedClusters?: readonly string[];
  readonly limits: {
    readonly maxStreams: number;
    readonly handshakeTimeoutMs: number;
    readonly idleTimeoutMs: number;
  };
}

/** `namespace/name`, both DNS labels or subdomains as Kubernetes names them. */
function objectName(flag: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\/[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/.test(value))
    throw new UsageError(`--${flag} must be namespace/name, not ${JSON.stringify(value)}`);
  return value;
}

const NAME = /^[a-z0-9]([-a-z0-9._]{0,251}[a-z0-9])?$/;

export function parseNetworkOptions(
  str: (name: keyof typeof NETWORK_FLAGS) => string | undefined,
): NetworkOptions {
  const network = str('network');
  if (network !== undefined && !NAME.test(network))
    throw new UsageError(
      `--network must be a lower-case name (letters, digits, . - _), not ${JSON.stringify(network)}`,
    );
  const files = [str('network-tls-cert'), str('network-tls-key'), str('network-trust-bundle')];
  const given = files.filter((f) => f !== undefined).length;
  if (given !== 0 && given !== 3)
    throw new UsageError('--network-tls-cert, --network-tls-key and --network-trust-bundle go together');
  const secret = objectName('network-tls-secret', str('network-tls-secret'));
  const bundle = objectName('network-trust-bundle-configmap', str('network-trust-bundle-configmap'));
  if (secret !== undefined && given !== 0)
    throw new UsageError(
      '--network-tls-secret replaces the three --network-tls files: give one or the other',
    );
  if (bundle !== undefined && secret === undefined)
    throw new UsageError('--network-trust-bundle-configmap goes with --network-tls-secret');
  const port = str('network-gateway-port');
  if (port !== undefined && given === 0 && secret === undefined)
    throw new UsageError(
      '--network-gateway-port needs --network-tls-secret, or --network-tls-cert, --network-tls-key and --network-trust-bundle',
    );
  const allowed = str('network-allowed-clusters');
  const allowedClusters = allowed?.split(',').map((entry) => {
    const name = entry.trim();
    if (!NAME.test(name))
      throw new UsageError(
        `--network-allowed-clusters entries are cluster names, not ${JSON.stringify(entry)}`,
      );
    return name;
  });
  const [certFile, keyFile, trustBundleFile] = files;
  return {
    ...optional('network', network),
    ...optional(
      'gatewayPort',
      port === undefined ? undefined : integer('network-gateway-port', port, 0, 65535),
    ),
    ...optional(
      'tls',
      certFile !== undefined && keyFile !== undefined && trustBundleFile !== undefined
        ? { certFile, keyFile, trustBundleFile }
        : undefined,
    ),
    ...optional(
      'tlsObjects',
      secret === undefined ? undefined : { secret, ...optional('trustBundleConfigMap', bundle) },
    ),
    certExpiryWarningMs: integer(
      'network-cert-expiry-warning-ms',
      str('network-cert-expiry-warning-ms') ?? String(7 * 24 * 3600 * 1000),
      0,
      365 * 24 * 3600 * 1000,
    ),
    ...optional('allowedClusters', allowedClusters),
    limits: {
      maxStreams: integer('network-max-streams', str('network-max-streams') ?? '100', 1, 10_000),
      handshakeTimeoutMs: integer(
        'network-handshake-timeout-ms',
        str('network-handshake-timeout-ms') ?? '10000',
        100,
        600_000,
      ),
      idleTimeoutMs: integer(
        'network-idle-timeout-ms',
        str('network-idle-timeout-ms') ?? '300000',
        1000,
        86_400_000,
      ),
    },
  };
}
