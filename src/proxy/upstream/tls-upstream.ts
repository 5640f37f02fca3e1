import type { Duplex } from 'node:stream';
import { checkServerIdentity, type PeerCertificate, connect as tlsConnect } from 'node:tls';
import type { buildConnector } from 'undici';
import type { BackendTls } from '../../ir/route-table.ts';
import { loadUndici } from './undici-loader.ts';

/** undici `connect` options for a BackendTLSPolicy: SNI, trust, identity check and the client certificate. */
export interface UpstreamTlsConnect {
  readonly servername: string;
  readonly ca?: string;
  readonly cert?: string;
  readonly key?: string;
  readonly rejectUnauthorized: true;
  readonly checkServerIdentity: (host: string, cert: PeerCertificate) => Error | undefined;
}

export function upstreamTlsConnect(tls: BackendTls): UpstreamTlsConnect {
  return {
    servername: tls.serverName,
    ...(tls.caPem !== undefined ? { ca: tls.caPem } : {}),
    ...(tls.clientCertificate
      ? { cert: tls.clientCertificate.certPem, key: tls.clientCertificate.keyPem }
      : {}),
    rejectUnauthorized: true,
    checkServerIdentity: identityCheck(tls),
  };
}

/**
 * BackendTLSPolicy validation: without subjectAltNames the certificate must be valid for `hostname`; with
 * them, for at least one of them (Hostname as a DNS name, wildcards included; URI exactly, as for SPIFFE IDs).
 */
export function identityCheck(tls: BackendTls): (host: string, cert: PeerCertificate) => Error | undefined {
  if (tls.subjectAltNames.length === 0) return (_host, cert) => checkServerIdentity(tls.serverName, cert);
  return (_host, cert) => {
    const names = (cert.subjectaltname ?? '').split(', ');
    for (const san of tls.subjectAltNames) {
      if (san.type === 'URI' && names.includes(`URI:${san.value}`)) return undefined;
      if (san.type === 'Hostname' && checkServerIdentity(san.value, cert) === undefined) return undefined;
    }
    // Node's code for a certificate that names another host: the attempt's failure is then a `tls-error`.
    return Object.assign(
      new Error(`backend certificate matches none of the subjectAltNames of BackendTLSPolicy ${tls.policy}`),
      { code: 'ERR_TLS_CERT_ALTNAME_INVALID' },
    );
  };
}

/**
 * An undici connector that always sends the policy's SNI: undici would otherwise take it from the request's
 * Host header, which names the route's hostname, not the backend's (BackendTLSPolicy.validation.hostname).
 */
export function upstreamTlsConnector(tls: BackendTls, timeoutMs: number): buildConnector.connector {
  const base = loadUndici().buildConnector({ ...upstreamTlsConnect(tls), timeout: timeoutMs });
  return (options, callback) => base({ ...options, servername: tls.serverName }, callback);
}

type DuplexConnect = (options: object, callback: (err: Error | null, socket: Duplex | null) => void) => void;

/**
 * A BackendTLSPolicy upstream on another network: `connect` opens the tunnel (a CONNECT stream through its
 * network gateway), then the TLS handshake with the backend runs inside it, with the policy's SNI, trust and
 * identity check, exactly as to a pod; the gateway in between relays bytes it cannot read.
 */
export function tlsInTunnel(connect: DuplexConnect, tls: BackendTls, timeoutMs: number): DuplexConnect {
  return (options, callback) => {
    connect(options, (err, stream) => {
      if (err !== null || stream === null) {
        callback(err ?? new Error('no tunnel'), null);
        return;
      }
      const socket = tlsConnect({ ...upstreamTlsConnect(tls), socket: stream, ALPNProtocols: ['http/1.1'] });
      const timer = setTimeout(() => {
        socket.destroy(
          Object.assign(new Error(`TLS handshake timeout after ${timeoutMs} ms`), {
            code: 'ERR_TLS_HANDSHAKE_TIMEOUT',
          }),
        );
      }, timeoutMs);
      const onError = (handshakeError: Error): void => {
        clearTimeout(timer);
        stream.destroy();
        callback(handshakeError, null);
      };
      socket.once('error', onError);
      socket.once('secureConnect', () => {
        clearTimeout(timer);
        socket.off('error', onError);
        callback(null, socket);
      });
    });
  };
}
