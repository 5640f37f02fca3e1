import { createHash } from 'node:crypto';
import type { BackendProtocol, BackendTls, UpstreamEndpoint } from '../../ir/route-table.ts';

/**
 * The name of the connection pool an endpoint's requests share, known when the table is compiled (so a new table
 * keeps the pools it still names) and used by the upstream pools to find or open one.
 */
export function poolKey(protocol: BackendProtocol, endpoint: UpstreamEndpoint, tls?: BackendTls): string {
  // Another network's gateway standing for a cluster: one pool of CONNECT streams per authority asked for, and
  // per what runs inside them (HTTP/1.1, an h2c session, or TLS with the policy's identity).
  if (endpoint.tunnel !== undefined) {
    const inside = tls !== undefined ? `tls|${tlsIdentity(tls)}` : protocol === 'h2c' ? 'h2c' : 'http';
    return `tunnel|${inside}|${endpoint.tunnel.authority}|${endpoint.key}`;
  }
  // BackendTLSPolicy: one pool per endpoint and TLS identity (HTTP/1.1 over TLS whatever the protocol).
  if (tls !== undefined) return `tls|${tlsIdentity(tls)}|${endpoint.key}`;
  return protocol === 'h2c' ? `h2c|${endpoint.key}` : endpoint.key;
}

const identities = new WeakMap<BackendTls, string>();

/**
 * A short stable name for what makes two TLS upstreams interchangeable (SNI, CA, names checked, client
 * certificate), so pools are shared when that is equal and never across different trust. Computed once per
 * table object.
 */
export function tlsIdentity(tls: BackendTls): string {
  let id = identities.get(tls);
  if (id === undefined) {
    const hash = createHash('sha256');
    hash.update(tls.serverName);
    hash.update('\0');
    hash.update(tls.caPem ?? 'system');
    for (const san of tls.subjectAltNames) hash.update(`\0${san.type}:${san.value}`);
    if (tls.clientCertificate)
      hash.update(`\0${tls.clientCertificate.certPem}\0${tls.clientCertificate.keyPem}`);
    id = hash.digest('base64url').slice(0, 16);
    identities.set(tls, id);
  }
  return id;
}
