import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import { DEFAULT_CONTROLLER_NAME } from '../gateway/options.ts';
import { LIMIT_FLAGS, type Limits, parseLimits } from './limits.ts';

/** Every flag, once: parsing, defaults and `--help` are all generated from this table. */
const FLAGS = {
  manifests: {
    type: 'string',
    arg: 'dir',
    help: 'Read and watch a folder of Kubernetes YAML (the file source).',
  },
  kubernetes: {
    type: 'boolean',
    help: 'Watch a Kubernetes API server (in-cluster config, else --kubeconfig/KUBECONFIG).',
  },
  kubeconfig: { type: 'string', arg: 'path', help: 'Kubeconfig file for --kubernetes.' },
  demo: {
    type: 'boolean',
    help: 'Run the built-in demo of simulated clusters (the default with no source flag).',
  },
  address: {
    type: 'string',
    arg: 'ip',
    help: 'Address the listeners bind. Default 127.0.0.1; 0.0.0.0 with --kubernetes.',
  },
  'listener-port-offset': {
    type: 'string',
    arg: 'n',
    help: 'Serve every Gateway listener port P at P + n. Default 0.',
  },
  'admin-port': {
    type: 'string',
    arg: 'n',
    help: 'Port of /healthz, /readyz, /metrics, /config_dump. Default 9901.',
  },
  'admin-address': {
    type: 'string',
    arg: 'ip',
    help: 'Address of the admin server (/config_dump shows the whole configuration). Default 127.0.0.1, always.',
  },
  'metrics-address': {
    type: 'string',
    arg: 'ip',
    help: 'Address of the metrics server (/metrics, /healthz, /readyz only). Default 0.0.0.0 when --metrics-port is set.',
  },
  'metrics-port': {
    type: 'string',
    arg: 'n',
    help: 'Serve /metrics, /healthz and /readyz on their own port, for Prometheus and probes (off by default).',
  },
  ...LIMIT_FLAGS,
  'east-west-port': {
    type: 'string',
    arg: 'n',
    help: 'Serve <svc>.<ns>.svc.clusterset.local on this port (off by default).',
  },
  'access-log': {
    type: 'boolean',
    help: 'Log one JSON line per request (direction, source, service, endpoint cluster/zone, status, duration).',
  },
  'controller-name': {
    type: 'string',
    arg: 'name',
    help: `GatewayClass controllerName to own. Default ${DEFAULT_CONTROLLER_NAME}.`,
  },
  'gateway-address': {
    type: 'string',
    arg: 'ip',
    help: 'Address written to Gateway status.addresses. Default: the listen address, or 127.0.0.1.',
  },
  cluster: {
    type: 'string',
    arg: 'name',
    help: "This cluster's name (overrides ClusterProperty cluster.clusterset.k8s.io). Env CLUSTERSET_GATEWAY_CLUSTER.",
  },
  clusterset: {
    type: 'string',
    arg: 'name',
    help: "The clusterset's name (overrides ClusterProperty clusterset.k8s.io).",
  },
  region: { type: 'string', arg: 'name', help: "The gateway's region. Env CLUSTERSET_GATEWAY_REGION." },
  zone: { type: 'string', arg: 'name', help: "The gateway's zone. Env CLUSTERSET_GATEWAY_ZONE." },
  node: {
    type: 'string',
    arg: 'name',
    help: "The gateway's node. Env CLUSTERSET_GATEWAY_NODE, else NODE_NAME.",
  },
  'service-import-kinds': {
    type: 'string',
    arg: 'group/Kind,...',
    help: 'backendRef kinds treated as ServiceImports. Default multicluster.x-k8s.io/ServiceImport.',
  },
  'lb-policy': {
    type: 'string',
    arg: 'p2c|wrr',
    help: 'Picker inside a locality tier: P2C over peak-EWMA (default) or weighted round-robin.',
  },
  'overprovisioning-factor': {
    type: 'string',
    arg: 'x',
    help: 'A tier keeps all traffic while healthy share x factor >= 100%. Default 1.4.',
  },
  'panic-threshold': {
    type: 'string',
    arg: 'percent',
    help: 'Below this healthy share, ignore health and spread over all endpoints. Default 50.',
  },
  'outlier-base-ejection-ms': {
    type: 'string',
    arg: 'ms',
    help: "An endpoint's n-th ejection by outlier detection lasts n x this. Default 30000.",
  },
  'no-health-checks': {
    type: 'boolean',
    help: 'Turn active health checks off (on by default: a TCP connect per endpoint, or HTTP by annotation).',
  },
  'health-check-interval-ms': {
    type: 'string',
    arg: 'ms',
    help: 'Time between two probes of an endpoint. Default 2000.',
  },
  'health-check-timeout-ms': {
    type: 'string',
    arg: 'ms',
    help: 'A probe fails after this long. Default 1000.',
  },
  'health-check-jitter': {
    type: 'string',
    arg: 'percent',
    help: 'Each probe interval varies at random by up to this much. Default 10.',
  },
  'health-check-max-rate': {
    type: 'string',
    arg: 'n',
    help: 'Probes per second at most; passing endpoints are probed less often beyond it (0 = no limit). Default 250.',
  },
  'health-check-unhealthy-threshold': {
    type: 'string',
    arg: 'n',
    help: 'Failed probes in a row that make an endpoint unhealthy. Default 2.',
  },
  'health-check-healthy-threshold': {
    type: 'string',
    arg: 'n',
    help: 'Passing probes in a row that make it healthy again. Default 1.',
  },
  'min-ejection-ms': {
    type: 'string',
    arg: 'ms',
    help: 'An ejected endpoint whose probes pass is back this long after its ejection began. Default 5000.',
  },
  'avoidance-ms': {
    type: 'string',
    arg: 'ms',
    help: 'After a failed attempt an endpoint is left out this long, or until it succeeds. Default 5000.',
  },
  'tls-client-hello-timeout-ms': {
    type: 'string',
    arg: 'ms',
    help: 'TLS listeners: time a client has to send its ClientHello (and finish a Terminate handshake). Default 10000.',
  },
  'tls-client-hello-max-bytes': {
    type: 'string',
    arg: 'n',
    help: 'TLS listeners: largest ClientHello read for its SNI; larger ones are reset. Default 16384.',
  },
  workers: {
    type: 'string',
    arg: 'n|auto',
    help: 'Data plane worker processes (node:cluster); auto = one per core. Default 1 (no workers).',
  },
  'admin-max-streams': {
    type: 'string',
    arg: 'n',
    help: 'Live topology streams (/api/topology/stream) open at once; more get 503. Default 16.',
  },
  'topology-endpoint-limit': {
    type: 'string',
    arg: 'n',
    help: 'Endpoints the topology page lists per zone; past it, counts and the unhealthy ones. Default 50.',
  },
  'log-level': {
    type: 'string',
    arg: 'level',
    help: 'trace, debug, info, warn, error. Default info (warn for the demo).',
  },
  help: { type: 'boolean', short: 'h', help: 'Show this help.' },
} as const satisfies Record<
  string,
  { type: 'string' | 'boolean'; arg?: string; short?: string; help: string }
>;

export interface CliOptions {
  readonly source:
    | { readonly kind: 'file'; readonly dir: string }
    | { readonly kind: 'kubernetes'; readonly kubeconfig?: string }
    | { readonly kind: 'demo' };
  readonly address: string;
  readonly listenerPortOffset: number;
  readonly adminPort: number;
  readonly adminAddress: string;
  readonly metrics?: { readonly address: string; readonly port: number };
  readonly limits: Limits;
  readonly eastWestPort?: number;
  readonly accessLog: boolean;
  readonly controllerName: string;
  readonly gatewayAddress?: string;
  readonly identity: {
    readonly cluster?: string;
    readonly clusterset?: string;
    readonly region?: string;
    readonly zone?: string;
    readonly node?: string;
  };
  readonly serviceImportKinds?: readonly { readonly group: string; readonly kind: string }[];
  readonly lbPolicy: 'p2c' | 'wrr';
  readonly overprovisioningFactor: number;
  readonly panicThresholdPercent: number;
  readonly outlierBaseEjectionMs: number;
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
  readonly workers: number;
  readonly adminMaxStreams: number;
  readonly topologyEndpointLimit: number;
  readonly logLevel: string;
  readonly help: boolean;
}

export class UsageError extends Error {
  readonly code = 'UsageError';
}

export function parseCli(argv: readonly string[], env: NodeJS.ProcessEnv): CliOptions {
  let values: Partial<Record<keyof typeof FLAGS, string | boolean>>;
  try {
    ({ values } = parseArgs({ args: [...argv], options: FLAGS, strict: true, allowPositionals: false }));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const str = (name: keyof typeof FLAGS): string | undefined => {
    const value = values[name];
    return typeof value === 'string' ? value : undefined;
  };
  const sources = [values.manifests !== undefined, values.kubernetes === true, values.demo === true].filter(
    Boolean,
  );
  if (sources.length > 1) throw new UsageError('choose one source: --manifests, --kubernetes or --demo');
  const manifests = str('manifests');
  const source: CliOptions['source'] =
    manifests !== undefined
      ? { kind: 'file', dir: manifests }
      : values.kubernetes
        ? { kind: 'kubernetes', ...optional('kubeconfig', str('kubeconfig') ?? env.KUBECONFIG) }
        : { kind: 'demo' };
  const inCluster = source.kind === 'kubernetes';
  const policy = str('lb-policy') ?? 'p2c';
  if (policy !== 'p2c' && policy !== 'wrr')
    throw new UsageError(`--lb-policy must be p2c or wrr, not ${policy}`);
  const eastWest = str('east-west-port');
  return {
    source,
    address: str('address') ?? (inCluster ? '0.0.0.0' : '127.0.0.1'),
    listenerPortOffset: integer('listener-port-offset', str('listener-port-offset') ?? '0', -65535, 65535),
    adminPort: integer('admin-port', str('admin-port') ?? '9901', 0, 65535),
    // /config_dump is the whole configuration: reachable from outside the host only when asked for by name.
    adminAddress: str('admin-address') ?? '127.0.0.1',
    ...optional('metrics', metricsServer(str('metrics-address'), str('metrics-port'))),
    limits: parseLimits(str, integer),
    ...optional(
      'eastWestPort',
      eastWest === undefined ? undefined : integer('east-west-port', eastWest, 0, 65535),
    ),
    accessLog: values['access-log'] === true,
    controllerName: str('controller-name') ?? DEFAULT_CONTROLLER_NAME,
    ...optional('gatewayAddress', str('gateway-address')),
    identity: {
      ...optional('cluster', str('cluster') ?? env.CLUSTERSET_GATEWAY_CLUSTER),
      ...optional('clusterset', str('clusterset') ?? env.CLUSTERSET_GATEWAY_CLUSTERSET),
      ...optional('region', str('region') ?? env.CLUSTERSET_GATEWAY_REGION),
      ...optional('zone', str('zone') ?? env.CLUSTERSET_GATEWAY_ZONE),
      ...optional('node', str('node') ?? env.CLUSTERSET_GATEWAY_NODE ?? env.NODE_NAME),
    },
    ...optional('serviceImportKinds', parseKinds(str('service-import-kinds'))),
    lbPolicy: policy,
    overprovisioningFactor: number(
      'overprovisioning-factor',
      str('overprovisioning-factor') ?? '1.4',
      1,
      100,
    ),
    panicThresholdPercent: number('panic-threshold', str('panic-threshold') ?? '50', 0, 100),
    outlierBaseEjectionMs: integer(
      'outlier-base-ejection-ms',
      str('outlier-base-ejection-ms') ?? '30000',
      0,
      3_600_000,
    ),
    healthCheck: {
      enabled: values['no-health-checks'] !== true,
      intervalMs: integer(
        'health-check-interval-ms',
        str('health-check-interval-ms') ?? '2000',
        100,
        3_600_000,
      ),
      timeoutMs: integer('health-check-timeout-ms', str('health-check-timeout-ms') ?? '1000', 10, 3_600_000),
      jitterPercent: number('health-check-jitter', str('health-check-jitter') ?? '10', 0, 100),
      maxProbesPerSecond: integer(
        'health-check-max-rate',
        str('health-check-max-rate') ?? '250',
        0,
        1_000_000,
      ),
      unhealthyThreshold: integer(
        'health-check-unhealthy-threshold',
        str('health-check-unhealthy-threshold') ?? '2',
        1,
        1000,
      ),
      healthyThreshold: integer(
        'health-check-healthy-threshold',
        str('health-check-healthy-threshold') ?? '1',
        1,
        1000,
      ),
      minEjectionMs: integer('min-ejection-ms', str('min-ejection-ms') ?? '5000', 0, 3_600_000),
      avoidanceMs: integer('avoidance-ms', str('avoidance-ms') ?? '5000', 0, 3_600_000),
    },
    tlsClientHelloTimeoutMs: integer(
      'tls-client-hello-timeout-ms',
      str('tls-client-hello-timeout-ms') ?? '10000',
      1,
      600_000,
    ),
    tlsClientHelloMaxBytes: integer(
      'tls-client-hello-max-bytes',
      str('tls-client-hello-max-bytes') ?? '16384',
      512,
      1_048_576,
    ),
    workers: workerCount(str('workers')),
    adminMaxStreams: integer('admin-max-streams', str('admin-max-streams') ?? '16', 0, 10_000),
    topologyEndpointLimit: integer(
      'topology-endpoint-limit',
      str('topology-endpoint-limit') ?? '50',
      0,
      100_000,
    ),
    // The demo's banner is what a newcomer reads first; its logs start at warn unless asked for.
    logLevel: str('log-level') ?? (source.kind === 'demo' ? 'warn' : 'info'),
    help: values.help === true,
  };
}

export function helpText(): string {
  const lines = Object.entries(FLAGS).map(([name, flag]) => {
    const arg = 'arg' in flag ? ` <${flag.arg}>` : '';
    return `  --${name}${arg}`.padEnd(44) + flag.help;
  });
  return [
    'clusterset-gateway: a Gateway API gateway that load-balances across clusters.',
    '',
    'Usage: clusterset-gateway [--manifests <dir> | --kubernetes | --demo] [flags]',
    '       (no source flag: the built-in demo of simulated clusters)',
    '',
    ...lines,
    '',
  ].join('\n');
}

/** `{ key: value }`, or `{}` when the value is absent or empty (an unset downward-API variable arrives as ''). */
function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined || value === '' ? {} : { [key]: value }) as { [P in K]?: V };
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

function integer(flag: string, text: string, min: number, max: number): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new UsageError(
      `--${flag} must be an integer between ${min} and ${max}, not ${JSON.stringify(text)}`,
    );
  }
  return value;
}

function number(flag: string, text: string, min: number, max: number): number {
  const value = Number(text);
  if (!Number.isFinite(value) || value < min || value > max) {
    throw new UsageError(`--${flag} must be a number between ${min} and ${max}, not ${JSON.stringify(text)}`);
  }
  return value;
}

function parseKinds(text: string | undefined): { group: string; kind: string }[] | undefined {
  if (text === undefined) return undefined;
  return text.split(',').map((entry) => {
    const slash = entry.lastIndexOf('/');
    if (slash <= 0 || slash === entry.length - 1) {
      throw new UsageError(`--service-import-kinds entries are group/Kind, not ${JSON.stringify(entry)}`);
    }
    return { group: entry.slice(0, slash), kind: entry.slice(slash + 1) };
  });
}
