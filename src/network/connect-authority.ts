import { isIP } from 'node:net';

/**
 * What a network gateway accepts as a CONNECT `:authority` (RFC 9113 §8.5: the host and port to tunnel to):
 * only a service's clusterset name with its port, `<svc>.<ns>.svc.clusterset.local:<port>`. An IP address, a
 * missing port or any other name is refused before any lookup: the gateway is never an open relay. Pure.
 */
export type AuthorityVerdict =
  | { readonly ok: true; readonly authority: string }
  | { readonly ok: false; readonly reason: 'missing-authority' | 'ip-authority' | 'bad-authority' };

const DNS_LABEL = '[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?';
const CLUSTERSET_AUTHORITY = new RegExp(
  `^${DNS_LABEL}\\.${DNS_LABEL}\\.svc\\.clusterset\\.local:([1-9][0-9]{0,4})$`,
);

export function parseConnectAuthority(value: string | undefined): AuthorityVerdict {
  if (value === undefined || value === '') return { ok: false, reason: 'missing-authority' };
  if (value.length > 300) return { ok: false, reason: 'bad-authority' };
  const authority = value.toLowerCase();
  const host = authority.startsWith('[')
    ? authority.slice(1, authority.indexOf(']'))
    : authority.replace(/:\d*$/, '');
  if (isIP(host) !== 0) return { ok: false, reason: 'ip-authority' };
  const match = CLUSTERSET_AUTHORITY.exec(authority);
  if (match === null || Number(match[3]) > 65535) return { ok: false, reason: 'bad-authority' };
  return { ok: true, authority };
}
