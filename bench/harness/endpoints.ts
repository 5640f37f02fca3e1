/** One upstream socket address a proxy forwards to. */
export interface Endpoint {
  readonly address: string;
  readonly port: number;
}

export function endpointKey(endpoint: Endpoint): string {
  return `${endpoint.address}:${endpoint.port}`;
}
