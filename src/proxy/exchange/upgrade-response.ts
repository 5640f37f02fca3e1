import { type IncomingMessage, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { applyHeaderMods, type HeaderMod, HOP_BY_HOP } from '../compile/header-ops.ts';
import { defaultText } from './local-reply.ts';

/**
 * The client's side of an upgrade request, written on its raw connection (Node's server hands an upgrade over
 * as a socket, not a response): the gateway's own answers, and the head of the endpoint's answer as relayed.
 */

/** Answers on the raw connection and closes it; returns the body's bytes. */
export function writeRawReply(socket: Duplex, status: number, text = '', extra = ''): number {
  if (socket.destroyed) return 0;
  const body = `${text === '' ? defaultText(status) : text}\n`;
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\ncontent-type: text/plain; charset=utf-8\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n${extra}\r\n${body}`,
  );
  return Buffer.byteLength(body);
}

/**
 * Whether the connection may carry another request once a refused upgrade is answered: HTTP/1.1 without
 * `Connection: close`, and no request body (its bytes are no longer framed by the parser: left unread, they
 * would be read as the next request).
 */
export function clientAllowsReuse(req: IncomingMessage): boolean {
  if (req.httpVersionMajor !== 1 || req.httpVersionMinor !== 1) return false;
  if (hasToken(req.headers.connection, 'close')) return false;
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] === undefined && (length === undefined || length === '0');
}

function hasToken(value: string | undefined, token: string): boolean {
  return value?.split(',').some((t) => t.trim().toLowerCase() === token) === true;
}

/** The value of a header in a flat raw list (the first of its name), lower-case name given. */
function rawHeader(raw: readonly string[], name: string): string | undefined {
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.toLowerCase() === name) return raw[i + 1];
  return undefined;
}

/** How a refused upgrade's answer is delimited toward the client. */
export type Framing = 'none' | 'length' | 'chunked' | 'close';

/** A refused upgrade's answer as relayed: its framing, and whether the client's connection goes on after it. */
export interface RefusalRelay {
  readonly framing: Framing;
  readonly keep: boolean;
  readonly head: string;
}

/**
 * How the endpoint's answer to an upgrade it refused goes to the client: its body delimited by its length, re-
 * chunked, or by the close (then `Connection: close`), and kept on when `reusable` (the client allows it) and
 * the endpoint does not close.
 */
export function refusalRelay(
  method: string,
  status: number,
  raw: readonly string[],
  mods: readonly HeaderMod[],
  reusable: boolean,
): RefusalRelay {
  const length = rawHeader(raw, 'content-length');
  let framing: Framing =
    method === 'HEAD' || status === 204 || status === 304 || status < 200
      ? 'none'
      : rawHeader(raw, 'transfer-encoding') !== undefined
        ? 'chunked'
        : length !== undefined
          ? 'length'
          : 'close';
  const closes = hasToken(rawHeader(raw, 'connection'), 'close');
  if (!reusable || closes) framing = framing === 'none' ? 'none' : 'close';
  const keep = reusable && framing !== 'close' && !closes;
  const extra: string[] = [];
  if ((framing === 'length' || framing === 'none') && length !== undefined)
    extra.push('content-length', length);
  if (framing === 'chunked') extra.push('transfer-encoding', 'chunked');
  if (!keep) extra.push('connection', 'close');
  return { framing, keep, head: responseHead(status, raw, mods, false, extra) };
}

/**
 * The answer's head as the client gets it: hop-by-hop fields dropped (a 101 keeps Connection and Upgrade), the
 * route's response header modifiers applied, then `extra` (the relay's framing).
 */
export function responseHead(
  status: number,
  raw: readonly string[],
  mods: readonly HeaderMod[],
  upgrade: boolean,
  extra: readonly string[] = [],
): string {
  let headers: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const lower = raw[i]!.toLowerCase();
    if (upgrade && (lower === 'connection' || lower === 'upgrade')) headers.push(raw[i]!, raw[i + 1]!);
    else if (!HOP_BY_HOP.has(lower) && lower !== 'content-length') headers.push(raw[i]!, raw[i + 1]!);
  }
  if (mods.length > 0) headers = applyHeaderMods(headers, mods);
  headers.push(...extra);
  let out = `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n`;
  for (let i = 0; i < headers.length; i += 2) out += `${headers[i]}: ${headers[i + 1]}\r\n`;
  return `${out}\r\n`;
}
