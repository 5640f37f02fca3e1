import type { BackendProtocol } from '../ir/route-table.ts';

/**
 * Gateway API backend protocol selection (GEP-1911): the Service port's `appProtocol` says how to speak to the
 * backend; `kubernetes.io/h2c` is HTTP/2 over cleartext, `kubernetes.io/ws` WebSocket over cleartext.
 * Anything else (unset, `http`, custom values) is plain HTTP/1.1.
 */
export function backendProtocol(...appProtocols: readonly (string | undefined)[]): BackendProtocol {
  const value = appProtocols.find((p) => p !== undefined && p !== '');
  // `grpc` is what many charts write for gRPC ports; gRPC is HTTP/2, cleartext unless a policy adds TLS.
  if (value === 'kubernetes.io/h2c' || value === 'grpc') return 'h2c';
  if (value === 'kubernetes.io/ws') return 'websocket';
  return 'http1';
}
