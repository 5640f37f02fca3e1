import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import { kDrainOnFailure } from '../upstream/direct-body.ts';
import type { JsHttp2ServerStream } from './js-http2-stream.ts';
import { type Http2Peer, Http2RequestView } from './lean-http2-request.ts';

/**
 * A request served on the js HTTP/2 codec: the request path's view of it (lean-http2-request.ts) over the
 * codec's stream, whose body, partly sent when an exchange fails, is drained so the stream can carry the answer.
 */
export class JsHttp2Request extends Http2RequestView<JsHttp2ServerStream> {
  constructor(
    stream: JsHttp2ServerStream,
    headers: IncomingHttpHeaders,
    rawHeaders: string[],
    peer: Http2Peer,
  ) {
    super(stream, headers, rawHeaders, peer);
    (stream as Readable & { [kDrainOnFailure]?: boolean })[kDrainOnFailure] = true;
  }
}
