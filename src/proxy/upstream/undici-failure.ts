import type { Dispatcher } from 'undici';
import { codeOf, type FailureKind, UpstreamFailure } from './attempt-outcome.ts';

/**
 * undici's side of the upstream contract: undici (TLS upstreams, tunnels to other networks) reports failures with
 * its own error classes and codes, Node's socket codes and OpenSSL's; they are translated into the data plane's
 * taxonomy (attempt-outcome.ts) here, at the one place its handlers are called, so nothing past this file knows an
 * undici code.
 */

/** A connection that died under a request. */
const RESET_CODES = new Set(['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE', 'ECONNABORTED']);
/** A request the gateway built that undici or Node refused to send. */
const LOCAL_CODES = new Set([
  'UND_ERR_INVALID_ARG',
  'UND_ERR_NOT_SUPPORTED',
  'ERR_INVALID_CHAR',
  'ERR_INVALID_ARG_TYPE',
  'ERR_INVALID_HTTP_TOKEN',
]);
/** A response undici's parser or its checks refused. */
const PROTOCOL_CODES = new Set([
  'UND_ERR_INFO',
  'UND_ERR_HEADERS_OVERFLOW',
  'UND_ERR_RES_CONTENT_LENGTH_MISMATCH',
  'UND_ERR_RES_EXCEEDED_MAX_SIZE',
  'UND_ERR_REQ_CONTENT_LENGTH_MISMATCH',
]);
/** OpenSSL's certificate verification results (X509_V_ERR_* without the prefix), as node:tls reports them. */
const CERTIFICATE_CODES = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_SIGNATURE_FAILURE',
  'CERT_REVOKED',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'INVALID_CA',
  'HOSTNAME_MISMATCH',
]);

/** Whether `err` is a TLS failure: a certificate the policy refuses, or a handshake OpenSSL gave up on. */
export function isTlsError(err: Error): boolean {
  const code = codeOf(err) ?? '';
  return (
    CERTIFICATE_CODES.has(code) ||
    code.startsWith('ERR_TLS_') ||
    code.startsWith('ERR_SSL_') ||
    typeof (err as { library?: unknown }).library === 'string'
  );
}

/**
 * The kind of an undici failure. `connected`: undici had called onConnect (the request was being written);
 * `responded`: the response head had arrived.
 */
export function undiciFailureKind(err: Error, connected: boolean, responded: boolean): FailureKind {
  const code = codeOf(err) ?? '';
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') return 'response-timeout';
  if (code === 'UND_ERR_CONNECT_TIMEOUT') return 'connect-timeout';
  if (code === 'UND_ERR_CLOSED' || code === 'UND_ERR_DESTROYED' || code === 'UND_ERR_ABORTED')
    return 'closed-locally';
  if (LOCAL_CODES.has(code)) return 'local-error';
  if (isTlsError(err)) return 'tls-error';
  if (code.startsWith('HPE_') || PROTOCOL_CODES.has(code)) return 'protocol-error';
  // Before onConnect nothing of the request left: the connection (or the tunnel under it) was never made.
  if (!connected) return 'refused';
  if (responded) return 'reset-mid-body';
  return RESET_CODES.has(code) ? 'reset-before-response' : 'protocol-error';
}

/** An attempt's handler as undici calls it: its failures reach the attempt translated. */
class UndiciBoundary implements Dispatcher.DispatchHandler {
  readonly #handler: Dispatcher.DispatchHandler;
  #connected = false;
  #responded = false;

  constructor(handler: Dispatcher.DispatchHandler) {
    this.#handler = handler;
  }

  onConnect(abort: (err?: Error) => void): void {
    this.#connected = true;
    this.#handler.onConnect?.(abort);
  }

  onHeaders(statusCode: number, headers: Buffer[], resume: () => void, statusText: string): boolean {
    if (statusCode >= 200) this.#responded = true;
    return this.#handler.onHeaders?.(statusCode, headers, resume, statusText) ?? true;
  }

  onData(chunk: Buffer): boolean {
    return this.#handler.onData?.(chunk) ?? true;
  }

  onComplete(trailers: string[] | null): void {
    this.#handler.onComplete?.(trailers);
  }

  onError(err: Error): void {
    const kind = undiciFailureKind(err, this.#connected, this.#responded);
    this.#handler.onError?.(new UpstreamFailure(kind, err.message, err));
  }
}

/** What undici dispatches on: a Pool or a Client. */
export interface UndiciDispatcher {
  dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean;
  close(): Promise<void>;
  destroy(): Promise<void>;
}

/** An undici Pool or Client whose handlers get the data plane's failures. */
export class UndiciUpstream {
  readonly #dispatcher: UndiciDispatcher;

  constructor(dispatcher: UndiciDispatcher) {
    this.#dispatcher = dispatcher;
  }

  dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    return this.#dispatcher.dispatch(options, new UndiciBoundary(handler));
  }

  close(): Promise<void> {
    return this.#dispatcher.close();
  }

  destroy(): Promise<void> {
    return this.#dispatcher.destroy();
  }
}
