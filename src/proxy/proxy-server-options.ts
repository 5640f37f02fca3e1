import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { BalancerFactory } from '../lb/balancer.ts';
import type { TlsTicketKeys } from '../net/tls-ticket-keys.ts';
import type { RequestTracer } from '../trace/request-tracer.ts';
import type { ProxyMetrics } from './compile/proxy-metrics.ts';
import type { RetryBudgetConfig } from './compile/retry-budget.ts';
import type { AccessLog } from './exchange/access-log.ts';
import type { PathNormalization } from './exchange/path-normalization.ts';
import type { SessionServices } from './exchange/session-persistence.ts';
import type { BindRetryOptions } from './listen/listener-bindings.ts';
import type { ListenerLimits } from './listen/request-guard.ts';
import type { TcpPortOptions } from './listen/tcp-port-server.ts';
import type { TlsPortOptions } from './listen/tls-port-server.ts';
import type { UdpPortOptions } from './listen/udp-port-server.ts';
import type { UpstreamPoolOptions } from './upstream/upstream-pools.ts';

/** What the data plane is given at start: where to listen, its limits, and what it reports to. */
export interface ProxyServerOptions {
  /** Address every listener binds; default 127.0.0.1. */
  readonly host?: string;
  /** Every Gateway listener port is served at port + offset (`--listener-port-offset`). Default 0. */
  readonly listenerPortOffset?: number;
  /** Overrides the offset: the port to bind for a Gateway port (tests return 0 for any free port). */
  readonly bindPort?: (gatewayPort: number) => number;
  readonly balancers: BalancerFactory;
  /** Metrics to record into; otherwise created in `registry` (or a private Registry). */
  readonly metrics?: ProxyMetrics;
  readonly registry?: Registry;
  readonly logger: Logger;
  readonly upstream?: UpstreamPoolOptions;
  /** The retry budget of backends no XBackendTrafficPolicy gives one (`--retry-budget-*`); DEFAULT_RETRY_BUDGET. */
  readonly retryBudget?: RetryBudgetConfig;
  /**
   * How long a closing listener (a removed port, or shutdown on SIGTERM) lets requests in flight finish.
   * Default 15 s (`--drain-timeout-ms`), below the Pod's terminationGracePeriodSeconds.
   */
  readonly drainTimeoutMs?: number;
  /** Client-side limits and timeouts of every listener port; defaults in DEFAULT_LISTENER_LIMITS. */
  readonly limits?: Partial<ListenerLimits>;
  /** Serve `RouteTable.clusterset` (the east-west listener) on this port of `host`, bound exactly (no offset; 0: any free port). */
  readonly eastWestPort?: number;
  /**
   * The session ticket keys of every HTTPS and TLS listener (`--tls-ticket-key-rotation-ms`; a `--workers`
   * primary's secret in its workers). Default: a secret of this proxy's own, rotated hourly.
   */
  readonly tlsTicketKeys?: TlsTicketKeys;
  /** TLS listener limits (`--tls-client-hello-timeout-ms`, `--tls-client-hello-max-bytes`). */
  readonly tls?: Partial<TlsPortOptions>;
  /** TCP and UDP listener limits (`--tcp-idle-timeout-ms`, `--udp-flow-idle-timeout-ms`, `--udp-max-flows`). */
  readonly layer4?: { readonly tcp?: Partial<TcpPortOptions>; readonly udp?: Partial<UdpPortOptions> };
  /** One line per request when set (`--access-log`). */
  readonly accessLog?: AccessLog;
  /** Session persistence (GEP-1619): the sealing keys and counters; absent: sessionPersistence is not applied. */
  readonly sessions?: SessionServices;
  /** Traces when set (`--otlp-endpoint`, docs/tracing.md). */
  readonly tracer?: RequestTracer;
  /** Path normalization before matching, on every listener; default all on (DEFAULT_PATH_NORMALIZATION). */
  readonly paths?: PathNormalization;
  /**
   * A table is compiled in slices of this many milliseconds, requests being served between them
   * (`--translation-slice-ms`; default 5, 0: in one go).
   */
  readonly compileSliceMs?: number;
  /**
   * HTTP/1.1 on the lean server path (lean-http1-server.ts), on HTTP and HTTPS listeners; default on,
   * `--no-lean-http1` turns it off.
   */
  readonly leanHttp1?: boolean;
  /**
   * HTTP/2 requests on the lean path (lean-http2-request.ts, lean-http2-response.ts); default on,
   * `--no-lean-http2` turns it off.
   */
  readonly leanHttp2?: boolean;
  /**
   * `--http2-codec`: HTTP/2 on node:http2 (`nghttp2`, default) or the project's own codec (`js`, src/net/http2),
   * for client connections (listeners without HTTP/2 CONNECT) and h2c upstreams.
   */
  readonly http2Codec?: 'js' | 'nghttp2';
  /** Backoff of the attempts to bind a listener that could not be bound (`--listener-bind-retry-max-ms`). */
  readonly bindRetry?: Partial<BindRetryOptions>;
  /** Called when a listening socket is bound, fails to bind, or leaves the table (read `listeners()`). */
  readonly onListenersChange?: () => void;
}
