import { maxHeaderSize } from 'node:http';

/**
 * A strict HTTP/1.1 response parser in JavaScript, with the interface of Node's llhttp binding as
 * http1-upstream.ts drives it (`initialize`, `execute`, `finish`, `close`, callbacks at the binding's slots), so
 * the upstream client takes either. Why: through the binding, every header name and value is a string made in
 * C++ and every body slice a fresh ArrayBuffer; here a head is one latin1 string cut into slices, and a small body
 * one copy from Node's buffer pool (bench/README.md, issue 31).
 *
 * RFC 9112 guards, as llhttp applies them without lenient flags: CRLF line endings only (a bare LF or CR is an
 * error), no obs-fold, no whitespace before a field's colon, token names and visible values, one Content-Length
 * of digits only, never with Transfer-Encoding, chunked framing checked byte for byte, head and trailer sections
 * bounded by Node's `maxHeaderSize`. Failures are Errors with llhttp's HPE_ codes.
 *
 * Over 300 lines for a reason: the head, the three body framings and the trailers are one state machine over
 * reads that may split anything anywhere.
 */

enum State {
  Head,
  LengthBody,
  EofBody,
  ChunkSize,
  ChunkData,
  ChunkDataEnd,
  Trailers,
  /** After a message that closes the connection, or a switch of protocols: no further bytes are HTTP. */
  Closed,
  Failed,
}

/** RFC 9110 token characters, by char code. */
const TOKEN = (() => {
  const table = new Uint8Array(256);
  for (const c of "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") {
    table[c.charCodeAt(0)] = 1;
  }
  return table;
})();
/** Field values and reason phrases: HTAB, SP, visible ASCII and obs-text (no CR, LF or other controls). */
const INVALID_VALUE = /[^\t\x20-\x7e\x80-\xff]/;
/**
 * What no line of a head or trailer section may hold, tested once over the section's text: a control other than
 * HTAB, or a CR that is not the start of a CRLF (one at the very end may be, with the next read). LFs are checked
 * line by line.
 */
const INVALID_SECTION = /[^\t\r\n\x20-\x7e\x80-\xff]|\r(?!\n|$)/;
const DIGITS = /^\d{1,15}$/;
const HEX_SIZE = /^[0-9A-Fa-f]{1,15}$/;
const CRLF_CRLF = Buffer.from('\r\n\r\n', 'latin1');

export type ParserError = Error & { code: string; bytesParsed?: number; reason?: string };

function parseError(code: string, reason: string): ParserError {
  return Object.assign(new Error(`Parse Error: ${reason}`), { code, reason });
}

/** Callback slots, numbered as Node's binding numbers them (the values only need to be distinct). */
export class Http1ResponseParser {
  static readonly RESPONSE = 2;
  static readonly kOnHeaders = 1;
  static readonly kOnHeadersComplete = 2;
  static readonly kOnBody = 3;
  static readonly kOnMessageComplete = 4;
  static readonly kLenientNone = 0;

  [callback: number]: unknown;
  #state = State.Head;
  /** The part of a head, chunk-size line or trailer section not yet parsed (a read ended inside it), latin1. */
  #pending = '';
  /** Bytes of the head or trailer section so far, against maxHeaderSize. */
  #sectionBytes = 0;
  #statusSeen = false;
  #versionMinor = 1;
  #statusCode = 0;
  #statusMessage = '';
  #fields: string[] = [];
  #contentLength = -1;
  #transferEncoding: string | undefined;
  #connectionClose = false;
  #connectionKeepAlive = false;
  #connectionUpgrade = false;
  #keepAlive = true;
  #remaining = 0;
  #error: ParserError | undefined;

  initialize(_type: number, _resource: object, _maxHeaderSize: number, _lenient: number): void {
    this.#state = State.Head;
    this.#resetMessage();
  }

  close(): void {
    this.#pending = '';
    this.#fields = [];
  }

  /** Hands on the body bytes of `data` from `at` that are still counted in #remaining; where they end. */
  #counted(data: Buffer, at: number): number {
    const end = at + Math.min(this.#remaining, data.length - at);
    this.#remaining -= end - at;
    this.#body(data, at, end);
    return end;
  }

  /** Parses `data` whole (it may be reused once this returns): its length, or the error that stops the parse. */
  execute(data: Buffer): number | ParserError {
    const length = data.length;
    let at = 0;
    while (at < length) {
      switch (this.#state) {
        case State.Head:
        case State.Trailers:
          at = this.#section(data, at);
          break;
        case State.LengthBody:
          at = this.#counted(data, at);
          if (this.#remaining === 0) this.#messageComplete();
          break;
        case State.EofBody:
          this.#body(data, at, length);
          at = length;
          break;
        case State.ChunkSize:
          at = this.#chunkSize(data, at);
          break;
        case State.ChunkData:
          at = this.#counted(data, at);
          if (this.#remaining === 0) {
            this.#state = State.ChunkDataEnd;
            this.#remaining = 2;
          }
          break;
        case State.ChunkDataEnd: {
          // The CRLF after a chunk's data, which a read may split.
          const expected = this.#remaining === 2 ? 13 : 10;
          if (data[at] !== expected) {
            this.#fail(
              parseError(expected === 13 ? 'HPE_CR_EXPECTED' : 'HPE_LF_EXPECTED', 'no CRLF after chunk data'),
            );
          } else {
            at++;
            if (--this.#remaining === 0) this.#state = State.ChunkSize;
          }
          break;
        }
        case State.Closed:
          if (this.#connectionUpgrade) return length;
          this.#fail(parseError('HPE_CLOSED_CONNECTION', 'data after Connection: close'));
          break;
        case State.Failed:
          break;
      }
      if (this.#state === State.Failed) {
        const error = this.#error!;
        error.bytesParsed = at;
        return error;
      }
    }
    return length;
  }

  /** The connection ended: completes a body read to the end, else an error if a message was cut. */
  finish(): ParserError | undefined {
    if (this.#state === State.EofBody) {
      this.#messageComplete();
      return undefined;
    }
    if (this.#state === State.Failed) return this.#error;
    if (this.#state === State.Closed) return undefined;
    if (this.#state === State.Head && !this.#statusSeen && this.#pending === '') return undefined;
    return this.#fail(parseError('HPE_INVALID_EOF_STATE', 'Invalid EOF state'));
  }

  #fail(error: ParserError): ParserError {
    this.#state = State.Failed;
    this.#error = error;
    return error;
  }

  #resetMessage(): void {
    this.#pending = '';
    this.#sectionBytes = 0;
    this.#statusSeen = false;
    this.#fields = [];
    this.#contentLength = -1;
    this.#transferEncoding = undefined;
    this.#connectionClose = false;
    this.#connectionKeepAlive = false;
    this.#connectionUpgrade = false;
  }

  #body(data: Buffer, start: number, end: number): void {
    if (end === start) return;
    // A copy: the caller's buffer is reused for the next read.
    const chunk = Buffer.allocUnsafe(end - start);
    data.copy(chunk, 0, start, end);
    (this[Http1ResponseParser.kOnBody] as (chunk: Buffer) => void)(chunk);
  }

  /**
   * Reads lines of a head or trailer section from `at`; returns where it stopped (after the blank line, or the
   * end of `data` with the last partial line kept).
   */
  #section(data: Buffer, at: number): number {
    const limit = maxHeaderSize;
    // Only the section's bytes become a string: up to the blank line when it is in this read, else what the size
    // limit still allows (one byte more, to tell an overflow).
    const blank = this.#pending === '' ? data.indexOf(CRLF_CRLF, at) : -1;
    const room = limit - this.#sectionBytes + 1;
    const stop = blank >= 0 ? Math.min(blank + 4, at + room) : Math.min(data.length, at + room);
    const text = this.#pending + data.toString('latin1', at, stop);
    const base = at - this.#pending.length;
    this.#pending = '';
    const invalid = INVALID_SECTION.exec(text);
    if (invalid !== null) {
      // Only lines up to the bad byte are taken: the error stops the parse there, as llhttp's would.
      this.#fail(
        invalid[0] === '\r'
          ? parseError('HPE_LF_EXPECTED', 'Missing expected LF after header value')
          : parseError('HPE_INVALID_HEADER_TOKEN', 'Invalid header value char'),
      );
      return stop;
    }
    let pos = 0;
    for (;;) {
      const lf = text.indexOf('\n', pos);
      if (lf < 0) {
        this.#sectionBytes += text.length - pos;
        if (this.#sectionBytes > limit) {
          this.#fail(parseError('HPE_HEADER_OVERFLOW', 'Header overflow'));
          return stop;
        }
        this.#pending = text.slice(pos);
        return stop;
      }
      this.#sectionBytes += lf + 1 - pos;
      if (this.#sectionBytes > limit) {
        this.#fail(parseError('HPE_HEADER_OVERFLOW', 'Header overflow'));
        return stop;
      }
      if (lf === pos || text.charCodeAt(lf - 1) !== 13) {
        this.#fail(parseError('HPE_CR_EXPECTED', 'Missing expected CR after header value'));
        return stop;
      }
      const lineEnd = lf - 1;
      const next = lf + 1;
      if (lineEnd === pos) {
        // The blank line: the section ends here.
        const end = base + next;
        if (this.#state === State.Trailers) this.#trailersComplete();
        else this.#headComplete();
        return end;
      }
      if (this.#state === State.Head && !this.#statusSeen) {
        if (!this.#statusLine(text, pos, lineEnd)) return stop;
      } else if (!this.#field(text, pos, lineEnd)) return stop;
      pos = next;
    }
  }

  #statusLine(text: string, start: number, end: number): boolean {
    // HTTP-version SP 3DIGIT [SP reason-phrase]
    if (
      end - start < 12 ||
      !text.startsWith('HTTP/1.', start) ||
      (text.charCodeAt(start + 7) !== 49 && text.charCodeAt(start + 7) !== 48) ||
      text.charCodeAt(start + 8) !== 32
    ) {
      if (text.startsWith('HTTP/', start))
        this.#fail(parseError('HPE_INVALID_VERSION', 'Invalid HTTP version'));
      else this.#fail(parseError('HPE_INVALID_CONSTANT', 'Expected HTTP/'));
      return false;
    }
    this.#versionMinor = text.charCodeAt(start + 7) - 48;
    let status = 0;
    for (let i = start + 9; i < start + 12; i++) {
      const digit = text.charCodeAt(i) - 48;
      if (digit < 0 || digit > 9) {
        this.#fail(parseError('HPE_INVALID_STATUS', 'Invalid status code'));
        return false;
      }
      status = status * 10 + digit;
    }
    if (status < 100) {
      this.#fail(parseError('HPE_INVALID_STATUS', 'Invalid status code'));
      return false;
    }
    let message = '';
    if (end > start + 12) {
      message = text.slice(start + 13, end);
      if (text.charCodeAt(start + 12) !== 32) {
        this.#fail(parseError('HPE_INVALID_STATUS', 'Invalid response status'));
        return false;
      }
    }
    this.#statusCode = status;
    this.#statusMessage = message;
    this.#statusSeen = true;
    return true;
  }

  #field(text: string, start: number, end: number): boolean {
    const first = text.charCodeAt(start);
    if (first === 32 || first === 9) {
      this.#fail(
        parseError('HPE_INVALID_HEADER_TOKEN', 'Unexpected whitespace after header value (obs-fold)'),
      );
      return false;
    }
    const colon = text.indexOf(':', start);
    if (colon <= start || colon >= end) {
      this.#fail(parseError('HPE_INVALID_HEADER_TOKEN', 'Invalid header field char'));
      return false;
    }
    for (let i = start; i < colon; i++) {
      if (TOKEN[text.charCodeAt(i)] !== 1) {
        this.#fail(parseError('HPE_INVALID_HEADER_TOKEN', 'Invalid header token'));
        return false;
      }
    }
    const name = text.slice(start, colon);
    let valueStart = colon + 1;
    let valueEnd = end;
    while (valueStart < valueEnd && isOws(text.charCodeAt(valueStart))) valueStart++;
    while (valueEnd > valueStart && isOws(text.charCodeAt(valueEnd - 1))) valueEnd--;
    const value = text.slice(valueStart, valueEnd);
    this.#fields.push(name, value);
    if (this.#state === State.Trailers) return true;
    switch (name.length) {
      case 10:
        if (isNamed(name, 'connection')) this.#connectionTokens(value);
        break;
      case 14:
        if (isNamed(name, 'content-length')) {
          if (this.#contentLength >= 0) {
            this.#fail(parseError('HPE_UNEXPECTED_CONTENT_LENGTH', 'Duplicate Content-Length'));
            return false;
          }
          if (!DIGITS.test(value)) {
            this.#fail(parseError('HPE_INVALID_CONTENT_LENGTH', 'Invalid character in Content-Length'));
            return false;
          }
          this.#contentLength = Number(value);
        }
        break;
      case 17:
        if (isNamed(name, 'transfer-encoding')) {
          this.#transferEncoding =
            this.#transferEncoding === undefined ? value : `${this.#transferEncoding}, ${value}`;
        }
        break;
      default:
        break;
    }
    return true;
  }

  #connectionTokens(value: string): void {
    if (value.length === 10 && isNamed(value, 'keep-alive')) this.#connectionKeepAlive = true;
    else if (value.length === 5 && isNamed(value, 'close')) this.#connectionClose = true;
    else this.#connectionList(value.toLowerCase());
  }

  #connectionList(value: string): void {
    for (const token of value.split(',')) {
      const lower = token.trim();
      if (lower === 'close') this.#connectionClose = true;
      else if (lower === 'keep-alive') this.#connectionKeepAlive = true;
      else if (lower === 'upgrade') this.#connectionUpgrade = true;
    }
  }

  #headComplete(): void {
    const status = this.#statusCode;
    if (!this.#statusSeen) {
      this.#fail(parseError('HPE_INVALID_CONSTANT', 'Expected HTTP/'));
      return;
    }
    let chunked = false;
    if (this.#transferEncoding !== undefined) {
      if (this.#contentLength >= 0) {
        this.#fail(
          parseError(
            'HPE_UNEXPECTED_CONTENT_LENGTH',
            "Content-Length can't be present with Transfer-Encoding",
          ),
        );
        return;
      }
      const codings = this.#transferEncoding.split(',');
      chunked = codings[codings.length - 1]!.trim().toLowerCase() === 'chunked';
    }
    const upgrade = status === 101;
    const noBody = status < 200 || status === 204 || status === 304;
    // A body without a length runs to the end of the connection (RFC 9112 §6.3), which then cannot be kept.
    const toEof = !noBody && !chunked && this.#contentLength < 0;
    const keepAlive =
      (this.#versionMinor === 1 ? !this.#connectionClose : this.#connectionKeepAlive) && !toEof && !upgrade;
    // An interim response is followed by the final one on the same connection, whatever it says.
    this.#keepAlive = keepAlive || (status < 200 && !upgrade);
    const fields = this.#fields;
    this.#fields = [];
    const skip = (
      this[Http1ResponseParser.kOnHeadersComplete] as (
        major: number,
        minor: number,
        headers: string[],
        method: undefined,
        url: undefined,
        statusCode: number,
        statusMessage: string,
        upgrade: boolean,
        shouldKeepAlive: boolean,
      ) => number
    )(1, this.#versionMinor, fields, undefined, undefined, status, this.#statusMessage, upgrade, keepAlive);
    if (this.#state === State.Failed) return;
    if (upgrade) {
      this.#messageComplete();
      this.#state = State.Closed;
      this.#connectionUpgrade = true;
      return;
    }
    if (noBody || skip === 1 || skip === 2) this.#messageComplete();
    else if (chunked) {
      this.#state = State.ChunkSize;
      this.#sectionBytes = 0;
    } else if (this.#contentLength >= 0) {
      this.#remaining = this.#contentLength;
      if (this.#remaining === 0) this.#messageComplete();
      else this.#state = State.LengthBody;
    } else this.#state = State.EofBody;
  }

  /** A chunk-size line (`1*HEXDIG [; extensions] CRLF`); returns where it stopped. */
  #chunkSize(data: Buffer, at: number): number {
    const lf = data.indexOf(10, at);
    const stop = lf < 0 ? data.length : lf + 1;
    const line = this.#pending + data.toString('latin1', at, stop);
    if (line.length > maxHeaderSize) {
      this.#fail(parseError('HPE_INVALID_CHUNK_SIZE', 'Chunk size line too long'));
      return stop;
    }
    if (lf < 0) {
      this.#pending = line;
      return stop;
    }
    this.#pending = '';
    if (line.length < 2 || line.charCodeAt(line.length - 2) !== 13) {
      this.#fail(parseError('HPE_CR_EXPECTED', 'Missing expected CR after chunk size'));
      return stop;
    }
    const content = line.slice(0, line.length - 2);
    const semicolon = content.indexOf(';');
    const size = semicolon < 0 ? content : content.slice(0, semicolon);
    if (!HEX_SIZE.test(size)) {
      this.#fail(parseError('HPE_INVALID_CHUNK_SIZE', 'Invalid character in chunk size'));
      return stop;
    }
    if (semicolon >= 0 && INVALID_VALUE.test(content.slice(semicolon + 1))) {
      this.#fail(parseError('HPE_STRICT', 'Invalid character in chunk extensions'));
      return stop;
    }
    const bytes = Number.parseInt(size, 16);
    if (bytes === 0) {
      this.#state = State.Trailers;
      this.#sectionBytes = 0;
    } else {
      this.#state = State.ChunkData;
      this.#remaining = bytes;
    }
    return stop;
  }

  #trailersComplete(): void {
    const trailers = this.#fields;
    this.#fields = [];
    if (trailers.length > 0) (this[Http1ResponseParser.kOnHeaders] as (headers: string[]) => void)(trailers);
    if (this.#state !== State.Failed) this.#messageComplete();
  }

  #messageComplete(): void {
    const keepAlive = this.#keepAlive;
    this.#resetMessage();
    this.#state = keepAlive ? State.Head : State.Closed;
    (this[Http1ResponseParser.kOnMessageComplete] as () => void)();
  }
}

/**
 * Whether `name` (token characters, of `lower`'s length) is `lower` (letters and '-') in any case, without making
 * a lower-cased copy. OR-ing 0x20 folds A-Z onto a-z and leaves '-' and the other token characters that could
 * land on a letter or '-' out of reach.
 */
export function isNamed(name: string, lower: string): boolean {
  for (let i = 0; i < lower.length; i++)
    if ((name.charCodeAt(i) | 0x20) !== lower.charCodeAt(i)) return false;
  return true;
}

function isOws(code: number): boolean {
  return code === 32 || code === 9;
}
