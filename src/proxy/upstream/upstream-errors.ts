/**
 * The failures of the project's own upstream clients (http1-upstream.ts, h2c-upstream.ts), with undici's codes and
 * messages, so attempt-failure.ts and connection-retry.ts classify them and undici's alike. They are not undici's
 * classes because undici alone adds about 20 MiB of RSS to the process: it is loaded only when a TLS upstream (or a
 * Node without its HTTP parser) needs it (undici-loader.ts).
 */
export class UpstreamError extends Error {
  readonly code: string;

  constructor(code: string, message: string) {
    super(message);
    this.code = code;
  }
}

/** A class of UpstreamError with undici's name, code and default message. */
function upstreamErrorClass(name: string, code: string, defaultMessage: string) {
  return class extends UpstreamError {
    constructor(message = defaultMessage) {
      super(code, message);
      this.name = name;
    }
  };
}

export const upstreamErrors = {
  RequestAbortedError: upstreamErrorClass('RequestAbortedError', 'UND_ERR_ABORTED', 'Request aborted'),
  ClientDestroyedError: upstreamErrorClass(
    'ClientDestroyedError',
    'UND_ERR_DESTROYED',
    'The client is destroyed',
  ),
  ClientClosedError: upstreamErrorClass('ClientClosedError', 'UND_ERR_CLOSED', 'The client is closed'),
  InvalidArgumentError: upstreamErrorClass(
    'InvalidArgumentError',
    'UND_ERR_INVALID_ARG',
    'Invalid Argument Error',
  ),
  SocketError: upstreamErrorClass('SocketError', 'UND_ERR_SOCKET', 'Socket error'),
  ConnectTimeoutError: upstreamErrorClass(
    'ConnectTimeoutError',
    'UND_ERR_CONNECT_TIMEOUT',
    'Connect Timeout Error',
  ),
  HeadersTimeoutError: upstreamErrorClass(
    'HeadersTimeoutError',
    'UND_ERR_HEADERS_TIMEOUT',
    'Headers Timeout Error',
  ),
  BodyTimeoutError: upstreamErrorClass('BodyTimeoutError', 'UND_ERR_BODY_TIMEOUT', 'Body Timeout Error'),
};
