import { type ClientHttp2Session, type ClientHttp2Stream, connect } from 'node:http2';

/** A network gateway peer as the tests drive it: node:http2 over TLS, nothing of the gateway's own code. */
export interface PeerTls {
  readonly cert?: string;
  readonly key?: string;
  readonly ca: string;
}

export function openPeer(port: number, tls: PeerTls): ClientHttp2Session {
  const session = connect(`https://127.0.0.1:${port}`, {
    ...tls,
    // The tests check the listener, not its name: any certificate of the trust bundle will do.
    checkServerIdentity: () => undefined,
  });
  session.on('error', () => {});
  session.once('goaway', () => goaways.add(session));
  return session;
}

const goaways = new WeakSet<ClientHttp2Session>();

/** Whether the gateway has told this session to go away (GOAWAY). */
export function wentAway(session: ClientHttp2Session): boolean {
  return goaways.has(session);
}

/** Resolves once the session is connected, or with the way it ended before that. */
export function sessionOutcome(session: ClientHttp2Session): Promise<'connected' | 'closed'> {
  return new Promise((resolve) => {
    session.once('connect', () => resolve('connected'));
    session.once('close', () => resolve('closed'));
  });
}

export interface StreamAnswer {
  readonly status: number | undefined;
  readonly refusal: string | undefined;
  readonly stream: ClientHttp2Stream;
  /** The RST_STREAM code when the stream was reset instead of answered. */
  readonly rstCode?: number;
}

/** Opens a stream (`CONNECT authority` unless `method` says) and waits for its answer or its end. */
export function openStream(
  session: ClientHttp2Session,
  authority: string,
  method = 'CONNECT',
): Promise<StreamAnswer> {
  const headers: Record<string, string> =
    method === 'CONNECT'
      ? { ':method': 'CONNECT', ':authority': authority }
      : { ':method': method, ':authority': authority, ':path': '/', ':scheme': 'https' };
  const stream = session.request(headers);
  return new Promise((resolve) => {
    stream.on('error', () => {});
    stream.once('response', (h) =>
      resolve({
        status: Number(h[':status']),
        refusal: h['clusterset-gateway-refusal'] as string | undefined,
        stream,
      }),
    );
    stream.once('close', () =>
      resolve({ status: undefined, refusal: undefined, stream, rstCode: stream.rstCode }),
    );
  });
}

/** Sends one HTTP/1.1 request through an open tunnel and returns the raw response text. */
export function httpThrough(stream: ClientHttp2Stream, host: string, path = '/'): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      text += chunk;
    });
    stream.once('end', () => resolve(text));
    stream.once('error', reject);
    stream.end(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
  });
}

/** The value of one counter series in Prometheus text, 0 when absent. */
export function counterValue(metrics: string, name: string, labels: string): number {
  const line = metrics.split('\n').find((l) => l.startsWith(`${name}{${labels}}`));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
}
