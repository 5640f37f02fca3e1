import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { Http2Session, ServerHttp2Stream } from 'node:http2';
import type { Readable } from 'node:stream';
import { kRequestBody } from '../exchange/upstream-request.ts';

/**
 * What the request path reads of a client connection (X-Forwarded-For, the access log, spans, the 421 check):
 * read once per HTTP/2 session, so that it is there even after the session is gone (the access log line of a
 * stream the client cut is written after that).
 */
export interface Http2Peer {
  readonly remoteAddress: string | undefined;
  readonly remotePort: number | undefined;
  /** The SNI name of a TLS connection (false or undefined without one), as TLSSocket#servername. */
  readonly servername: string | false | undefined;
  readonly encrypted: boolean;
}

const kPeer = Symbol('clusterset-gateway.http2Peer');

type PeeredSession = Http2Session & { [kPeer]?: Http2Peer };

export function http2Peer(session: Http2Session | undefined): Http2Peer {
  if (session === undefined) return NO_PEER;
  const s = session as PeeredSession;
  let peer = s[kPeer];
  if (peer === undefined) {
    const socket = session.socket as
      | (Http2Session['socket'] & { servername?: string | false; encrypted?: boolean })
      | undefined;
    peer = {
      remoteAddress: socket?.remoteAddress,
      remotePort: socket?.remotePort,
      servername: socket?.servername,
      encrypted: socket?.encrypted === true,
    };
    s[kPeer] = peer;
  }
  return peer;
}

const NO_PEER: Http2Peer = {
  remoteAddress: undefined,
  remotePort: undefined,
  servername: undefined,
  encrypted: false,
};

/**
 * What the request path reads of an HTTP/2 request, on either codec: method, url, headers and rawHeaders as the
 * stream delivered them (pseudo-headers included), the stream, the client's address and the HTTP version; the
 * body is the stream itself (`kRequestBody`), read as any Readable.
 */
export class Http2RequestView<S extends Readable>
  implements Pick<IncomingMessage, 'rawHeaders' | 'httpVersionMajor' | 'httpVersionMinor' | 'httpVersion'>
{
  readonly stream: S;
  readonly headers: IncomingHttpHeaders;
  readonly rawHeaders: string[];
  readonly socket: Http2Peer;
  readonly httpVersionMajor = 2;
  readonly httpVersionMinor = 0;
  readonly httpVersion = '2.0';

  constructor(stream: S, headers: IncomingHttpHeaders, rawHeaders: string[], peer: Http2Peer) {
    this.stream = stream;
    this.headers = headers;
    this.rawHeaders = rawHeaders;
    this.socket = peer;
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

/**
 * A request served on the lean HTTP/2 path (node:http2's stream API), without the compatibility layer's
 * Readable, its proxy socket and the six listeners it puts on the stream.
 */
export class LeanHttp2Request extends Http2RequestView<ServerHttp2Stream> {
  constructor(stream: ServerHttp2Stream, headers: IncomingHttpHeaders, rawHeaders: string[]) {
    super(stream, headers, rawHeaders, http2Peer(stream.session));
  }
}
