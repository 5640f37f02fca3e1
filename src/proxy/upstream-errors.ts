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

export const upstreamErrors = {
  RequestAbortedError: class extends UpstreamError {
    constructor(message = 'Request aborted') {
      super('UND_ERR_ABORTED', message);
    }
  },
  ClientDestroyedError: class extends UpstreamError {
    constructor(message = 'The client is destroyed') {
      super('UND_ERR_DESTROYED', message);
    }
  },
  ClientClosedError: class extends UpstreamError {
    constructor(message = 'The client is closed') {
      super('UND_ERR_CLOSED', message);
    }
  },
  InvalidArgumentError: class extends UpstreamError {
    constructor(message = 'Invalid Argument Error') {
      super('UND_ERR_INVALID_ARG', message);
    }
  },
  SocketError: class extends UpstreamError {
    constructor(message = 'Socket error') {
      super('UND_ERR_SOCKET', message);
    }
  },
  ConnectTimeoutError: class extends UpstreamError {
    constructor(message = 'Connect Timeout Error') {
      super('UND_ERR_CONNECT_TIMEOUT', message);
    }
  },
  HeadersTimeoutError: class extends UpstreamError {
    constructor(message = 'Headers Timeout Error') {
      super('UND_ERR_HEADERS_TIMEOUT', message);
    }
  },
  BodyTimeoutError: class extends UpstreamError {
    constructor(message = 'Body Timeout Error') {
      super('UND_ERR_BODY_TIMEOUT', message);
    }
  },
};
