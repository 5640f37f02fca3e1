import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { kRequestBody } from '../exchange/upstream-request.ts';
import { kDrainOnFailure } from '../upstream/direct-body.ts';
import type { JsHttp2ServerStream } from './js-http2-stream.ts';
import type { Http2Peer } from './lean-http2-request.ts';

/**
 * A request served on the js HTTP/2 codec: what the request path reads of IncomingMessage (method, url, headers
 * and rawHeaders with the pseudo-headers, the client's address, the HTTP version), the stream (`stream`, as on
 * the lean path) and the body (`kRequestBody`, the stream itself).
 */
export class JsHttp2Request
  implements Pick<IncomingMessage, 'rawHeaders' | 'httpVersionMajor' | 'httpVersionMinor' | 'httpVersion'>
{
  readonly stream: JsHttp2ServerStream;
  readonly headers: IncomingHttpHeaders;
  readonly rawHeaders: string[];
  readonly socket: Http2Peer;
  readonly httpVersionMajor = 2;
  readonly httpVersionMinor = 0;
  readonly httpVersion = '2.0';

  constructor(
    stream: JsHttp2ServerStream,
    headers: IncomingHttpHeaders,
    rawHeaders: string[],
    peer: Http2Peer,
  ) {
    this.stream = stream;
    this.headers = headers;
    this.rawHeaders = rawHeaders;
    this.socket = peer;
    (stream as Readable & { [kDrainOnFailure]?: boolean })[kDrainOnFailure] = true;
  }

  get method(): string | undefined {
    return this.headers[':method'] as string | undefined;
  }

  get url(): string | undefined {
    return this.headers[':path'] as string | undefined;
  }

  get [kRequestBody](): Readable {
    return this.stream;
  }
}
