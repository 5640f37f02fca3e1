export type { CompiledBackend } from './compile/compile-backends.ts';
export type { CompiledTable } from './compile/compile-table.ts';
export { compileRouteTable } from './compile/compile-table.ts';
export { ProxyMetrics, type RequestSeries, type UpstreamSeries } from './compile/proxy-metrics.ts';
export type { BindRetryOptions, ListenerBinding } from './listen/listener-bindings.ts';
export { ProxyServer, type ProxyServerOptions } from './proxy-server.ts';
export type { UpstreamPoolOptions } from './upstream/upstream-pools.ts';
