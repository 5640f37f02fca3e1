import { DEFAULT_CONTROLLER_NAME } from '../gateway/options.ts';
import { LIMIT_FLAGS } from './limits.ts';
import { NETWORK_FLAGS } from './network-flags.ts';
import { TRACE_FLAGS } from './trace-flags.ts';

/** Every flag, once: parsing, defaults and `--help` are all generated from this table. */
export const FLAGS = {
  manifests: {
    type: 'string',
    arg: 'dir',
    help: 'Read and watch a folder of Kubernetes YAML (the file source).',
  },
  kubernetes: {
    type: 'boolean',
    help: "Watch a Kubernetes API server; config from --kubeconfig, else KUBECONFIG, the pod's service account, ~/.kube/config.",
  },
  kubeconfig: { type: 'string', arg: 'path', help: 'Kubeconfig file for --kubernetes.' },
  'clusterprofile-provider-file': {
    type: 'string',
    arg: 'file',
    help: 'Fleet mode: ClusterProfiles whose status.accessProviders name a provider in this JSON file ({"providers":[{"name","execConfig"}]}, as cluster-inventory-api) become member clusters, reached with that exec plugin. See docs/fleet.md.',
  },
  'clusterprofile-access-provider': {
    type: 'string',
    arg: 'file',
    help: "The same as --clusterprofile-provider-file, by KEP-4322's name for it (cluster-inventory-api's library keeps the other). Give either; both with different files is a usage error.",
  },
  'member-kubeconfigs': {
    type: 'string',
    arg: 'dir',
    help: 'Fleet mode: every kubeconfig file in this folder is a member cluster (its current context), added and removed as files come and go.',
  },
  'write-export-status': {
    type: 'boolean',
    help: "Fleet mode: write the gateway's ServiceExport conditions (Valid, Ready, Conflict) to the members' ServiceExports' status (needs patch on serviceexports/status there). Off by default: the gateway only reads members.",
  },
  'member-exec-timeout-ms': {
    type: 'string',
    arg: 'ms',
    help: "A member's exec credential plugin taking longer is killed and the member retried. Default 30000.",
  },
  validation: {
    type: 'string',
    arg: 'strict|warn',
    help: "Manifests' unknown or repeated fields: strict refuses the object, as kubectl apply does; warn drops them with a warning. Default strict.",
  },
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
  'no-normalize-path': {
    type: 'boolean',
    help: 'Match and forward request paths as received: no RFC 3986 dot-segment removal, %-decoding of unreserved characters or backslash-as-slash (on by default).',
  },
  'no-merge-slashes': {
    type: 'boolean',
    help: 'Keep repeated slashes in request paths (merged into one by default).',
  },
  'path-escaped-slashes-action': {
    type: 'string',
    arg: 'keep|reject|unescape-and-redirect|unescape-and-forward',
    help: '%2F and %5C in a path: kept encoded, refused with 400 (and %00 too), or decoded and then redirected to (307) or forwarded. Default keep.',
  },
  'east-west-port': {
    type: 'string',
    arg: 'n',
    help: 'Serve Services and ServiceImports east-west (<svc>.<ns>.svc.cluster.local, <svc>.<ns>.svc.clusterset.local, GAMMA routes) on this port (off by default).',
  },
  ...NETWORK_FLAGS,
  'mesh-namespaces': {
    type: 'string',
    arg: 'ns,...',
    help: 'Only the Services of these namespaces are served east-west (default: every namespace; the label clusterset-gateway.io/mesh=disabled on a Service or Namespace also leaves it out).',
  },
  'no-lean-http1': {
    type: 'boolean',
    help: "Serve every HTTP/1 request with Node's http.Server (https.Server on HTTPS listeners). By default requests without a body or with a Content-Length body are read and answered on the lean server path (heads read on the socket, answers written to it); anything else on a connection (chunked bodies, upgrades, Expect, HTTP/1.0, malformed heads) goes to Node's server either way.",
  },
  'no-lean-http2': {
    type: 'boolean',
    help: "Serve every HTTP/2 request (h2 over TLS, h2c, gRPC) through node:http2's compatibility layer (Http2ServerRequest, Http2ServerResponse). By default requests are served on the lean path: on the js codec (--http2-codec), or with --http2-codec nghttp2 over node:http2's stream itself, where CONNECT and requests with Expect go through the compatibility layer either way.",
  },
  'http2-codec': {
    type: 'string',
    arg: 'js|nghttp2',
    help: "The HTTP/2 implementation, for client connections and h2c upstreams. js (default): the gateway's own codec in TypeScript (src/net/http2): frames and HPACK parsed and written in JS, lean per-stream objects, one socket write per event-loop turn. nghttp2: node:http2. Listeners that take HTTP/2 CONNECT (east-west, the network gateway) stay on node:http2 either way.",
  },
  'access-log': {
    type: 'boolean',
    help: 'Log one line per request on every server path (direction, source, service, backend, endpoint cluster/zone, status, body bytes, attempts, how the last attempt failed, duration), JSON or text as --log-format says.',
  },
  'session-key-file': {
    type: 'string',
    arg: 'path',
    help: 'Keys sealing session persistence values (GEP-1619 cookies and headers), one secret of at least 32 characters a line; the first seals, every one opens (rotation). Give every replica the same file. Default: a key generated at start, so values survive no restart and no other replica (docs/sessions.md).',
  },
  ...TRACE_FLAGS,
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
  'cluster-property': {
    type: 'string',
    multiple: true,
    arg: 'name=value',
    help: "A property of the gateway's own cluster for ClusterSelectionPolicy tiers (repeatable), e.g. jurisdiction=eu.",
  },
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
  'max-ejection-percent': {
    type: 'string',
    arg: 'percent',
    help: "At most this share of a backend's endpoints is ejected by outlier detection at once; one always may be (Envoy's rule); 0 turns ejection off. Default 10.",
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
  'tcp-idle-timeout-ms': {
    type: 'string',
    arg: 'ms',
    help: 'TCP listeners: a relayed connection with no byte either way for this long is closed. Default 3600000.',
  },
  'tcp-connect-timeout-ms': {
    type: 'string',
    arg: 'ms',
    help: 'TCP listeners: time one connect to a backend endpoint may take before another endpoint is tried. Default 5000.',
  },
  'layer4-read-buffer-bytes': {
    type: 'string',
    arg: 'n',
    help: 'TCP and TLS listeners, east-west CONNECT: the read buffer each relayed upstream connection holds while it is open, reused for every read (none allocated per read) and then kept for the next connections (up to 4 MiB of idle buffers). Smaller saves memory with many connections at a cost per byte relayed (16384: 1.4x the CPU per byte of 65536, relaying 64 KiB responses). Default 65536.',
  },
  'udp-flow-idle-timeout-ms': {
    type: 'string',
    arg: 'ms',
    help: 'UDP listeners: a flow (client address and port) with no datagram either way for this long ends. Default 60000.',
  },
  'udp-max-flows': {
    type: 'string',
    arg: 'n',
    help: 'UDP listeners: flows per listener port; a new one evicts the flow idle longest. Default 4096.',
  },
  'translation-thread': {
    type: 'boolean',
    help: 'Translate on a worker thread of its own, sent only the objects that changed and answering with what changed in the result. The default; the flag overrides --no-translation-thread.',
  },
  'file-source-thread': {
    type: 'boolean',
    help: 'With the translation thread, read a --manifests folder on another thread of its own, which sends the serving thread only the objects each reload changed. Off by default: the thread costs about 10 MiB of RSS, and the serving thread reads the folder in slices of --translation-slice-ms, which kept route edits at 10,000 routes within their targets (bench/README.md, issue 45); for very large folders edited often.',
  },
  'no-translation-thread': {
    type: 'boolean',
    help: 'Translate on the serving thread instead, in slices of --translation-slice-ms. On 2 quiet cores this took CPU from requests: during edits at 10,000 routes, request p99 164-183 ms against 34-38 with the thread (bench/README.md, issue 45).',
  },
  workers: {
    type: 'string',
    arg: 'n|auto',
    help: 'Data plane worker processes (node:cluster); auto = one per core. Default 1 (no workers).',
  },
  'status-write-qps': {
    type: 'string',
    arg: 'n',
    help: 'Status writes (--kubernetes) started per second, from their own queue; never delays routing. Default 20.',
  },
  'status-write-burst': {
    type: 'string',
    arg: 'n',
    help: 'Status writes that may start at once after a quiet spell. Default 50.',
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
  'log-format': {
    type: 'string',
    arg: 'format',
    help: 'json: one pino JSON object a line, for log collectors (default). text: `HH:MM:SS.mmm LEVEL message key=value`, for a terminal (level coloured on a TTY unless NO_COLOR is set).',
  },
  help: { type: 'boolean', short: 'h', help: 'Show this help.' },
} as const satisfies Record<
  string,
  { type: 'string' | 'boolean'; arg?: string; short?: string; multiple?: boolean; help: string }
>;

export type FlagName = keyof typeof FLAGS;

/**
 * docs/flags.md: every flag with its help, from the same table as `--help`
 * (`npm run docs:flags` rewrites it; a test fails while it lags behind).
 */
export function flagsMarkdown(): string {
  const rows = Object.entries(FLAGS).map(([name, flag]) => {
    const arg = 'arg' in flag ? ` <${flag.arg}>` : '';
    return `| \`--${name}${arg}\` | ${flag.help.replaceAll('|', '\\|')} |`;
  });
  return [
    '# Flags',
    '',
    '<!-- Generated from src/cli/flags.ts by `npm run docs:flags`; edit the help there. -->',
    '',
    '`clusterset-gateway [--manifests <dir> | --kubernetes | --demo] [flags]`; with no source flag it runs the',
    'built-in demo. `npm start -- <flags>` runs the same program; `--help` prints this list.',
    '',
    '| flag | meaning |',
    '| --- | --- |',
    ...rows,
    '',
  ].join('\n');
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
