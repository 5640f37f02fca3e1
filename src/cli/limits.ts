import { integer } from './flag-values.ts';

/**
 * The limits and timeouts a user may need to change, each with the default a user of nginx or Envoy would
 * expect (README "Security" lists them). One table: flag, help with the default, and the parsed value.
 */
const LIMITS = {
  'drain-timeout-ms': {
    key: 'drainTimeoutMs',
    default: 15_000,
    max: 3_600_000,
    help: 'On SIGTERM, let requests in flight finish this long (new connections refused). Default 15000.',
  },
  'header-timeout-ms': {
    key: 'headerTimeoutMs',
    default: 10_000,
    max: 3_600_000,
    help: 'A request head must arrive within this, else 408. Default 10000.',
  },
  'keep-alive-timeout-ms': {
    key: 'keepAliveTimeoutMs',
    default: 5_000,
    max: 3_600_000,
    help: 'Idle time between requests on a client keep-alive connection. Default 5000.',
  },
  'idle-timeout-ms': {
    key: 'idleTimeoutMs',
    default: 120_000,
    max: 86_400_000,
    help: 'A client connection with no bytes moving either way is closed after this. Default 120000.',
  },
  'send-timeout-ms': {
    key: 'sendTimeoutMs',
    default: 60_000,
    max: 86_400_000,
    help: 'A client that stops reading its response is cut after this. Default 60000.',
  },
  'tunnel-idle-timeout-ms': {
    key: 'tunnelIdleTimeoutMs',
    default: 3_600_000,
    max: 604_800_000,
    help: 'An upgraded connection (WebSocket) with no bytes moving either way is closed after this. Default 3600000.',
  },
  'tls-ticket-key-rotation-ms': {
    key: 'tlsTicketKeyRotationMs',
    default: 3_600_000,
    max: 604_800_000,
    help: 'HTTPS and TLS listeners change their session ticket keys this often (on the clock, in every worker at once); a ticket from before costs one full handshake. Default 3600000.',
  },
  'change-debounce-ms': {
    key: 'changeDebounceMs',
    default: 100,
    max: 60_000,
    help: 'With --kubernetes, quiet time after a change before the configuration is rebuilt. Default 100.',
  },
  'max-change-delay-ms': {
    key: 'maxChangeDelayMs',
    default: 1_000,
    max: 600_000,
    help: 'With --kubernetes, a stream of changes delays a rebuild at most this long. Default 1000.',
  },
  'endpoint-debounce-ms': {
    key: 'endpointDebounceMs',
    default: 5,
    max: 60_000,
    help: 'With --kubernetes, quiet time after EndpointSlice-only changes (applied in place, no translation). Default 5.',
  },
  'translation-slice-ms': {
    key: 'translationSliceMs',
    default: 5,
    max: 60_000,
    help: 'Control-plane work on the serving thread (a translation without the thread, compiling a table, reading the manifests folder) runs in slices of this long, letting requests be served between them; 0: in one go. Default 5.',
  },
  'translation-thread-nice': {
    key: 'translationThreadNice',
    default: 10,
    min: 0,
    max: 19,
    help: 'The translation thread runs this many nice steps below the serving thread (Linux), so that on busy cores requests win the CPU and a table waits; 0: the same priority. Default 10.',
  },
  'max-header-bytes': {
    key: 'maxHeaderBytes',
    default: 16_384,
    max: 1_048_576,
    help: 'Request line and headers, in bytes; more is 431. Default 16384.',
  },
  'max-headers': {
    key: 'maxHeaders',
    default: 100,
    max: 10_000,
    help: 'Request header fields; more is 400. Default 100.',
  },
  'http2-max-concurrent-streams': {
    key: 'http2MaxConcurrentStreams',
    default: 100,
    max: 2_147_483_647,
    help: 'With --http2-codec js: streams one client connection may have open (SETTINGS_MAX_CONCURRENT_STREAMS); more are refused with REFUSED_STREAM. Default 100.',
  },
  'http2-stream-window-bytes': {
    key: 'http2StreamWindowBytes',
    default: 65_535,
    max: 2_147_483_647,
    help: "With --http2-codec js: request body bytes a client may send on one stream ahead of the gateway's reading (SETTINGS_INITIAL_WINDOW_SIZE); the window reopens as the body is passed upstream. Default 65535.",
  },
  'http2-max-resets-per-10s': {
    key: 'http2MaxResetsPer10s',
    default: 1000,
    max: 1_000_000,
    help: 'With --http2-codec js: streams a client connection may cancel before their answer (or have refused) in 10 s; more ends it with GOAWAY ENHANCE_YOUR_CALM (rapid reset, CVE-2023-44487). Default 1000.',
  },
  'upstream-response-timeout-ms': {
    key: 'upstreamResponseTimeoutMs',
    default: 60_000,
    max: 86_400_000,
    help: 'A backend must send response headers (and each body chunk) within this, else 504. Default 60000.',
  },
  'max-connections-per-endpoint': {
    key: 'maxConnectionsPerEndpoint',
    default: 1024,
    max: 1_000_000,
    help: 'Upstream connections per endpoint. Default 1024.',
  },
  'max-queue-per-endpoint': {
    key: 'maxQueuePerEndpoint',
    default: 1024,
    max: 1_000_000,
    help: 'Requests waiting for a connection per endpoint; more are answered 503. Default 1024.',
  },
  'upstream-connect-timeout-ms': {
    key: 'upstreamConnectTimeoutMs',
    default: 5_000,
    max: 300_000,
    help: 'A connection to a backend must be up within this; else the attempt is a connect failure, retried on another endpoint. Default 5000.',
  },
  'retry-budget-percent': {
    key: 'retryBudgetPercent',
    default: 20,
    max: 100,
    help: "Retries in flight to a backend are at most this percent of its requests in flight (Envoy's retry budget); an XBackendTrafficPolicy retryConstraint on the backend replaces it. Default 20.",
  },
  'retry-budget-min-concurrency': {
    key: 'retryBudgetMinConcurrency',
    default: 10,
    max: 1_000_000,
    help: 'Retries in flight to a backend allowed whatever the budget percent gives (a retryConstraint minRetryRate count replaces it). Default 10.',
  },
  'retry-window-ms': {
    key: 'retryWindowMs',
    default: 15_000,
    max: 86_400_000,
    help: "No retry starts once a request is this old; a route's request timeout, when set, bounds the request instead. Default 15000.",
  },
  'max-manifest-bytes': {
    key: 'maxManifestBytes',
    default: 1_048_576,
    max: 1_073_741_824,
    help: 'A manifest file larger than this is refused (a listed problem). Default 1048576.',
  },
  'max-manifest-objects': {
    key: 'maxManifestObjects',
    default: 10_000,
    max: 10_000_000,
    help: 'Objects read from the manifests folder; files past the cap are refused. Default 10000.',
  },
  'listener-bind-retry-max-ms': {
    key: 'listenerBindRetryMaxMs',
    default: 5_000,
    max: 600_000,
    help: 'A listener port that cannot be bound (in use, or below 1024 without the right) is tried again with backoff from 250 ms, doubled up to this. Default 5000.',
  },
  'member-first-list-timeout-ms': {
    key: 'memberFirstListTimeoutMs',
    default: 15_000,
    max: 3_600_000,
    help: "Fleet mode: the first routing table (and so every listener) waits for the members' first lists at most this long; a member listed later is served when it arrives. Default 15000.",
  },
} as const;

type LimitName = keyof typeof LIMITS;
export type Limits = { readonly [N in LimitName as (typeof LIMITS)[N]['key']]: number };

export const LIMIT_FLAGS = Object.fromEntries(
  Object.entries(LIMITS).map(([name, limit]) => [name, { type: 'string', arg: 'n', help: limit.help }]),
) as { readonly [N in LimitName]: { type: 'string'; arg: 'n'; help: string } };

export function parseLimits(str: (name: LimitName) => string | undefined): Limits {
  const out: Record<string, number> = {};
  for (const [name, limit] of Object.entries(LIMITS) as [LimitName, (typeof LIMITS)[LimitName]][]) {
    const text = str(name);
    const min = 'min' in limit ? limit.min : 1;
    out[limit.key] = text === undefined ? limit.default : integer(name, text, min, limit.max);
  }
  return out as Limits;
}
