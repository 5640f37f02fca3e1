/**
 * What a scenario's clients speak to the proxy and the proxy to the backend. Every config of a scenario
 * carries the same traffic, so the rows compare like with like.
 */
export type Traffic =
  /** HTTP/1.1 in, HTTP/1.1 out. */
  | 'http'
  /** HTTPS in, terminated by the proxy; plain HTTP/1.1 out. Direct: HTTPS to the backend itself. */
  | 'https-terminate'
  /** TLS in, routed by its SNI and relayed untouched to the backend's HTTPS listener. */
  | 'tls-passthrough'
  /** gRPC unary calls over h2c (HTTP/2, prior knowledge) in and out. */
  | 'grpc';

export function usesTls(traffic: Traffic): boolean {
  return traffic === 'https-terminate' || traffic === 'tls-passthrough';
}
