/**
 * Session persistence (Gateway API GEP-1619), compiled from a route rule's or an XBackendTrafficPolicy's
 * `sessionPersistence` (and, once it lands, the Backend resource's, GEP-4894: it attaches where the policy does).
 * The persisted value is the gateway's own sealed token (docs/sessions.md): it names the backend, cluster and
 * endpoint the session is pinned to and when it was issued.
 */
export interface SessionPersistenceConfig {
  /** Where the value travels: a cookie, or a request header the answer sets in a response header of that name. */
  readonly type: 'Cookie' | 'Header';
  /** The cookie's or header's name (the `sessionName`, or a default named after the source). */
  readonly name: string;
  /** A value older than this is ignored (a fresh pick); absent: no limit. */
  readonly absoluteTimeoutMs?: number;
  /** Cookie only: `Permanent` gives the cookie Max-Age (the absolute timeout); `Session` none. */
  readonly lifetime: 'Session' | 'Permanent';
  /** `HTTPRoute/ns/name/rule/<index>`, `GRPCRoute/...` or `XBackendTrafficPolicy/ns/name`: for /config_dump. */
  readonly source: string;
}
