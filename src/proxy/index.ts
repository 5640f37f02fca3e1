export type { CompiledBackend } from './compile-backends.ts';
export type { CompiledTable } from './compile-table.ts';
export { compileRouteTable } from './compile-table.ts';
export { ProxyMetrics, type RequestSeries, type UpstreamSeries } from './proxy-metrics.ts';
export { ProxyServer, type ProxyServerOptions } from './proxy-server.ts';
export type { UpstreamPoolOptions } from './upstream-pools.ts';
