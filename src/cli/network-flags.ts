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
  readonly allowedClusters?: readonly string[];
  readonly limits: {
    readonly maxStreams: number;
    readonly handshakeTimeoutMs: number;
    readonly idleTimeoutMs: number;
  };
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
  const port = str('network-gateway-port');
  if (port !== undefined && given === 0)
    throw new UsageError(
      '--network-gateway-port needs --network-tls-cert, --network-tls-key and --network-trust-bundle',
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
