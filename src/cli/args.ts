import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import { DEFAULT_CONTROLLER_NAME } from '../gateway/options.ts';
import type { LocalIdentity } from '../mcs/cluster-identity.ts';
import { NETWORK_PROPERTY } from '../mcs/networks.ts';
import type { TracingOptions } from '../trace/tracing-options.ts';
import { integer, number, optional, parseKinds, parseNamespaces, UsageError } from './flag-values.ts';
import { FLAGS, type FlagName } from './flags.ts';
import { type Limits, parseLimits } from './limits.ts';
import { type NetworkOptions, parseNetworkOptions } from './network-flags.ts';
import { parseTraceOptions } from './trace-flags.ts';

const ESCAPED_SLASHES_ACTIONS = ['keep', 'reject', 'unescape-and-redirect', 'unescape-and-forward'] as const;
type EscapedSlashesAction = (typeof ESCAPED_SLASHES_ACTIONS)[number];

/**
 * The command line as the program's options: flags (flags.ts) parsed, checked (flag-values.ts) and defaulted.
 */

export interface CliOptions {
  readonly source:
    | { readonly kind: 'file'; readonly dir: string }
    | { readonly kind: 'kubernetes'; readonly kubeconfig?: string }
    | { readonly kind: 'demo' };
  /** --validation: what unknown and repeated fields in manifests cost (KEP-2885 fieldValidation). */
  readonly fieldValidation: 'Strict' | 'Warn';
  readonly address: string;
  readonly listenerPortOffset: number;
  readonly adminPort: number;
  readonly adminAddress: string;
  readonly metrics?: { readonly address: string; readonly port: number };
  readonly limits: Limits;
  readonly eastWestPort?: number;
  /** Multi-network (docs/multi-network.md): `--network`, the network gateway listener and its identity. */
  readonly network: NetworkOptions;
  /** `--mesh-namespaces`: the namespaces whose Services east-west serves; absent: all. */
  readonly meshNamespaces?: readonly string[];
  /** Path normalization before route matching (docs/paths.md). */
  readonly paths: {
    readonly normalize: boolean;
    readonly mergeSlashes: boolean;
    readonly escapedSlashes: EscapedSlashesAction;
  };
  readonly accessLog: boolean;
  /** `--session-key-file`: the keys sealing session persistence values; absent: one generated at start. */
  readonly sessionKeyFile?: string;
  /** OpenTelemetry traces (docs/tracing.md); undefined: off. */
  readonly tracing?: TracingOptions;
  /**
   * The lean server path for HTTP/1.1, cleartext and over TLS (src/proxy/listen/lean-http1-server.ts);
   * `--no-lean-http1` turns it off.
   */
  readonly leanHttp1: boolean;
  /**
   * The lean server path for HTTP/2 (src/proxy/listen/lean-http2-request.ts); `--no-lean-http2` turns it off.
   */
  readonly leanHttp2: boolean;
  /** `--http2-codec`: the project's own codec (`js`, default, src/net/http2) or node:http2 (`nghttp2`). */
  readonly http2Codec: 'js' | 'nghttp2';
  /**
   * Full translations on a worker thread (app/translation-thread.ts): `--translation-thread`, or by default with
   * more than 2 cores; `--no-translation-thread` turns it off.
   */
  readonly translationThread: boolean;
  /** The manifests folder read on a thread of its own (with the translation thread). */
  readonly fileSourceThread: boolean;
  readonly controllerName: string;
  readonly gatewayAddress?: string;
  readonly identity: LocalIdentity;
  /** Fleet mode (docs/fleet.md): where member clusters come from; undefined when neither flag is given. */
  readonly fleet?: {
    readonly providerFile?: string;
    readonly kubeconfigDir?: string;
    readonly execTimeoutMs: number;
    /** --write-export-status: ServiceExport conditions written to the members. */
    readonly writeExportStatus: boolean;
  };
  readonly serviceImportKinds?: readonly { readonly group: string; readonly kind: string }[];
  readonly lbPolicy: 'p2c' | 'wrr';
  readonly overprovisioningFactor: number;
  readonly panicThresholdPercent: number;
  readonly outlierBaseEjectionMs: number;
  readonly maxEjectionPercent: number;
  /** Active health checks and the health model (issue 10). */
  readonly healthCheck: {
    readonly enabled: boolean;
    readonly intervalMs: number;
    readonly timeoutMs: number;
    readonly jitterPercent: number;
    readonly maxProbesPerSecond: number;
    readonly unhealthyThreshold: number;
    readonly healthyThreshold: number;
    readonly minEjectionMs: number;
    readonly avoidanceMs: number;
  };
  readonly tlsClientHelloTimeoutMs: number;
  readonly tlsClientHelloMaxBytes: number;
  readonly tcpIdleTimeoutMs: number;
  readonly tcpConnectTimeoutMs: number;
  readonly layer4ReadBufferBytes: number;
  readonly udpFlowIdleTimeoutMs: number;
  readonly udpMaxFlows: number;
  readonly workers: number;
  readonly adminMaxStreams: number;
  /** `--status-write-qps` and `--status-write-burst`: the status queue's token bucket. */
  readonly statusWriteQps: number;
  readonly statusWriteBurst: number;
  readonly topologyEndpointLimit: number;
  readonly logLevel: string;
  /** `--log-format`: pino's JSON lines, or text for a terminal (src/log/text-format.ts). */
  readonly logFormat: 'json' | 'text';
  readonly help: boolean;
}

/** `--cluster-property name=value`, repeatable; a name given twice is a usage error, not a silent override. */
function clusterProperties(given: unknown): Record<string, string> | undefined {
  const entries = Array.isArray(given) ? given.filter((v): v is string => typeof v === 'string') : [];
  if (entries.length === 0) return undefined;
  const out: Record<string, string> = {};
  for (const entry of entries) {
    const eq = entry.indexOf('=');
    const name = eq > 0 ? entry.slice(0, eq) : '';
    const value = eq > 0 ? entry.slice(eq + 1) : '';
    if (name === '' || value === '')
      throw new UsageError(`--cluster-property must be name=value, not ${entry}`);
    if (name in out) throw new UsageError(`--cluster-property ${name} given twice`);
    out[name] = value;
  }
  return out;
}

/** `--network` is this cluster's network property; given both ways, they must agree. */
function withNetwork(
  properties: Record<string, string> | undefined,
  network: string | undefined,
): Record<string, string> | undefined {
  if (network === undefined) return properties;
  const stated = properties?.[NETWORK_PROPERTY];
  if (stated !== undefined && stated !== network)
    throw new UsageError(
      `--network ${network} and --cluster-property ${NETWORK_PROPERTY}=${stated} disagree`,
    );
  return { ...properties, [NETWORK_PROPERTY]: network };
}

/** `--clusterprofile-provider-file`, or KEP-4322's `--clusterprofile-access-provider` for it; both must agree. */
function providerFileOf(str: (name: FlagName) => string | undefined): string | undefined {
  const file = str('clusterprofile-provider-file');
  const alias = str('clusterprofile-access-provider');
  if (file !== undefined && alias !== undefined && file !== alias)
    throw new UsageError(
      `--clusterprofile-provider-file ${file} and --clusterprofile-access-provider ${alias} disagree: they are one flag by two names, give one`,
    );
  return file ?? alias;
}

function fleetOptions(
  str: (name: FlagName) => string | undefined,
  writeExportStatus: boolean,
): CliOptions['fleet'] {
  const providerFile = providerFileOf(str);
  const kubeconfigDir = str('member-kubeconfigs');
  const timeout = str('member-exec-timeout-ms');
  if (providerFile === undefined && kubeconfigDir === undefined) {
    if (timeout !== undefined)
      throw new UsageError(
        '--member-exec-timeout-ms needs --clusterprofile-provider-file or --member-kubeconfigs',
      );
    if (writeExportStatus)
      throw new UsageError(
        '--write-export-status needs --clusterprofile-provider-file or --member-kubeconfigs',
      );
    return undefined;
  }
  return {
    ...optional('providerFile', providerFile),
    ...optional('kubeconfigDir', kubeconfigDir),
    execTimeoutMs: integer('member-exec-timeout-ms', timeout ?? '30000', 100, 600_000),
    writeExportStatus,
  };
}

/** The Secret the demo writes into its hub manifests with the gateway's network identity (src/demo/topology.ts). */
const DEMO_NETWORK_SECRET = 'fleet-system/east-1-network-identity';

export function parseCli(argv: readonly string[], env: NodeJS.ProcessEnv): CliOptions {
  let values: Partial<Record<FlagName, string | boolean | string[]>>;
  try {
    ({ values } = parseArgs({ args: [...argv], options: FLAGS, strict: true, allowPositionals: false }));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const str = (name: FlagName): string | undefined => {
    const value = values[name];
    return typeof value === 'string' ? value : undefined;
  };
  /** A numeric flag: its value, else `fallback`, checked against [min, max] (flag-values.ts). */
  const int = (name: FlagName, fallback: string, min: number, max: number): number =>
    integer(name, str(name) ?? fallback, min, max);
  const num = (name: FlagName, fallback: string, min: number, max: number): number =>
    number(name, str(name) ?? fallback, min, max);
  const sources = [values.manifests !== undefined, values.kubernetes === true, values.demo === true].filter(
    Boolean,
  );
  if (sources.length > 1) throw new UsageError('choose one source: --manifests, --kubernetes or --demo');
  const manifests = str('manifests');
  const source: CliOptions['source'] =
    manifests !== undefined
      ? { kind: 'file', dir: manifests }
      : values.kubernetes
        ? { kind: 'kubernetes', ...optional('kubeconfig', str('kubeconfig')) }
        : { kind: 'demo' };
  const inCluster = source.kind === 'kubernetes';
  const policy = str('lb-policy') ?? 'p2c';
  if (policy !== 'p2c' && policy !== 'wrr')
    throw new UsageError(`--lb-policy must be p2c or wrr, not ${policy}`);
  const logFormat = str('log-format') ?? 'json';
  if (logFormat !== 'json' && logFormat !== 'text')
    throw new UsageError(`--log-format must be json or text, not ${logFormat}`);
  const http2Codec = str('http2-codec') ?? 'js';
  if (http2Codec !== 'js' && http2Codec !== 'nghttp2')
    throw new UsageError(`--http2-codec must be js or nghttp2, not ${http2Codec}`);
  const eastWest = str('east-west-port');
  const parsedNetwork = parseNetworkOptions(str);
  // The demo's cluster west-1 is on a network of its own: the gateway's identity comes with the demo's manifests.
  const network: NetworkOptions =
    source.kind === 'demo' && parsedNetwork.tls === undefined && parsedNetwork.tlsObjects === undefined
      ? { ...parsedNetwork, tlsObjects: { secret: DEMO_NETWORK_SECRET } }
      : parsedNetwork;
  const validation = str('validation') ?? 'strict';
  if (validation !== 'strict' && validation !== 'warn')
    throw new UsageError(`--validation must be strict or warn, not ${validation}`);
  const escapedSlashes = str('path-escaped-slashes-action') ?? 'keep';
  if (!(ESCAPED_SLASHES_ACTIONS as readonly string[]).includes(escapedSlashes))
    throw new UsageError(
      `--path-escaped-slashes-action must be one of ${ESCAPED_SLASHES_ACTIONS.join(', ')}, not ${escapedSlashes}`,
    );
  return {
    source,
    paths: {
      normalize: values['no-normalize-path'] !== true,
      mergeSlashes: values['no-merge-slashes'] !== true,
      escapedSlashes: escapedSlashes as EscapedSlashesAction,
    },
    fieldValidation: validation === 'strict' ? 'Strict' : 'Warn',
    address: str('address') ?? (inCluster ? '0.0.0.0' : '127.0.0.1'),
    listenerPortOffset: int('listener-port-offset', '0', -65535, 65535),
    adminPort: int('admin-port', '9901', 0, 65535),
    // /config_dump is the whole configuration: reachable from outside the host only when asked for by name.
    adminAddress: str('admin-address') ?? '127.0.0.1',
    ...optional('metrics', metricsServer(str('metrics-address'), str('metrics-port'))),
    limits: parseLimits(str),
    ...optional(
      'eastWestPort',
      eastWest === undefined ? undefined : integer('east-west-port', eastWest, 0, 65535),
    ),
    ...optional('meshNamespaces', parseNamespaces('mesh-namespaces', str('mesh-namespaces'))),
    network,
    accessLog: values['access-log'] === true,
    ...optional('sessionKeyFile', str('session-key-file')),
    ...optional('tracing', parseTraceOptions(str)),
    leanHttp1: values['no-lean-http1'] !== true,
    leanHttp2: values['no-lean-http2'] !== true,
    http2Codec,
    translationThread: values['translation-thread'] === true || values['no-translation-thread'] !== true,
    fileSourceThread: values['file-source-thread'] === true,
    controllerName: str('controller-name') ?? DEFAULT_CONTROLLER_NAME,
    ...optional('gatewayAddress', str('gateway-address')),
    identity: {
      ...optional('cluster', str('cluster') ?? env.CLUSTERSET_GATEWAY_CLUSTER),
      ...optional('clusterset', str('clusterset') ?? env.CLUSTERSET_GATEWAY_CLUSTERSET),
      ...optional('region', str('region') ?? env.CLUSTERSET_GATEWAY_REGION),
      ...optional('zone', str('zone') ?? env.CLUSTERSET_GATEWAY_ZONE),
      ...optional('node', str('node') ?? env.CLUSTERSET_GATEWAY_NODE ?? env.NODE_NAME),
      ...optional('properties', withNetwork(clusterProperties(values['cluster-property']), network.network)),
    },
    ...optional('fleet', fleetOptions(str, values['write-export-status'] === true)),
    ...optional('serviceImportKinds', parseKinds(str('service-import-kinds'))),
    lbPolicy: policy,
    overprovisioningFactor: num('overprovisioning-factor', '1.4', 1, 100),
    panicThresholdPercent: num('panic-threshold', '50', 0, 100),
    maxEjectionPercent: num('max-ejection-percent', '10', 0, 100),
    outlierBaseEjectionMs: int('outlier-base-ejection-ms', '30000', 0, 3_600_000),
    healthCheck: {
      enabled: values['no-health-checks'] !== true,
      intervalMs: int('health-check-interval-ms', '2000', 100, 3_600_000),
      timeoutMs: int('health-check-timeout-ms', '1000', 10, 3_600_000),
      jitterPercent: num('health-check-jitter', '10', 0, 100),
      maxProbesPerSecond: int('health-check-max-rate', '250', 0, 1_000_000),
      unhealthyThreshold: int('health-check-unhealthy-threshold', '2', 1, 1000),
      healthyThreshold: int('health-check-healthy-threshold', '1', 1, 1000),
      minEjectionMs: int('min-ejection-ms', '5000', 0, 3_600_000),
      avoidanceMs: int('avoidance-ms', '5000', 0, 3_600_000),
    },
    tlsClientHelloTimeoutMs: int('tls-client-hello-timeout-ms', '10000', 1, 600_000),
    tlsClientHelloMaxBytes: int('tls-client-hello-max-bytes', '16384', 512, 1_048_576),
    tcpIdleTimeoutMs: int('tcp-idle-timeout-ms', '3600000', 1, 86_400_000),
    tcpConnectTimeoutMs: int('tcp-connect-timeout-ms', '5000', 1, 600_000),
    layer4ReadBufferBytes: int('layer4-read-buffer-bytes', '65536', 1024, 4_194_304),
    udpFlowIdleTimeoutMs: int('udp-flow-idle-timeout-ms', '60000', 100, 86_400_000),
    udpMaxFlows: int('udp-max-flows', '4096', 1, 1_000_000),
    workers: workerCount(str('workers')),
    adminMaxStreams: int('admin-max-streams', '16', 0, 10_000),
    statusWriteQps: int('status-write-qps', '20', 1, 10_000),
    statusWriteBurst: int('status-write-burst', '50', 1, 10_000),
    topologyEndpointLimit: int('topology-endpoint-limit', '50', 0, 100_000),
    // The demo's banner is what a newcomer reads first; its logs start at warn unless asked for.
    logLevel: str('log-level') ?? (source.kind === 'demo' ? 'warn' : 'info'),
    logFormat,
    help: values.help === true,
  };
}

function metricsServer(
  address: string | undefined,
  port: string | undefined,
): { address: string; port: number } | undefined {
  if (port === undefined) {
    if (address !== undefined) throw new UsageError('--metrics-address needs --metrics-port');
    return undefined;
  }
  return { address: address ?? '0.0.0.0', port: integer('metrics-port', port, 0, 65535) };
}

function workerCount(text: string | undefined): number {
  if (text === undefined) return 1;
  if (text === 'auto') return availableParallelism();
  return integer('workers', text, 1, 256);
}
