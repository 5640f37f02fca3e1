import { maxHeaderSize } from 'node:http';
import { type ParserError, parseError, ResponseHead } from './http1-response-head.ts';

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
 * The status line and fields are read by the class it extends (http1-response-head.ts); this is the state machine
 * over reads that may split anything anywhere: the head's and trailers' lines, the three body framings.
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

/** Field values and reason phrases: HTAB, SP, visible ASCII and obs-text (no CR, LF or other controls). */
const INVALID_VALUE = /[^\t\x20-\x7e\x80-\xff]/;
/**
 * What no line of a head or trailer section may hold, tested once over the section's text: a control other than
 * HTAB, or a CR that is not the start of a CRLF (one at the very end may be, with the next read). LFs are checked
 * line by line.
 */
const INVALID_SECTION = /[^\t\r\n\x20-\x7e\x80-\xff]|\r(?!\n|$)/;
const HEX_SIZE = /^[0-9A-Fa-f]{1,15}$/;
const CRLF_CRLF = Buffer.from('\r\n\r\n', 'latin1');

/** Callback slots, numbered as Node's binding numbers them (the values only need to be distinct). */
export class Http1ResponseParser extends ResponseHead {
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
  #keepAlive = true;
  #remaining = 0;
  #error: ParserError | undefined;

  initialize(_type: number, _resource: object, _maxHeaderSize: number, _lenient: number): void {
    this.#state = State.Head;
    this.#resetMessage();
  }

  close(): void {
    this.#pending = '';
    this.fields = [];
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
          if (this.connectionUpgrade) return length;
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
    if (this.#state === State.Head && !this.statusSeen && this.#pending === '') return undefined;
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
    this.resetHead();
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
      const refused =
        this.#state === State.Head && !this.statusSeen
          ? this.statusLine(text, pos, lineEnd)
          : this.field(text, pos, lineEnd, this.#state === State.Trailers);
      if (refused !== undefined) {
        this.#fail(refused);
        return stop;
      }
      pos = next;
    }
  }

  #headComplete(): void {
    const status = this.statusCode;
    if (!this.statusSeen) {
      this.#fail(parseError('HPE_INVALID_CONSTANT', 'Expected HTTP/'));
      return;
    }
    let chunked = false;
    if (this.transferEncoding !== undefined) {
      if (this.contentLength >= 0) {
        this.#fail(
          parseError(
            'HPE_UNEXPECTED_CONTENT_LENGTH',
            "Content-Length can't be present with Transfer-Encoding",
          ),
        );
        return;
      }
      const codings = this.transferEncoding.split(',');
      chunked = codings[codings.length - 1]!.trim().toLowerCase() === 'chunked';
    }
    const upgrade = status === 101;
    const noBody = status < 200 || status === 204 || status === 304;
    // A body without a length runs to the end of the connection (RFC 9112 §6.3), which then cannot be kept.
    const toEof = !noBody && !chunked && this.contentLength < 0;
    const keepAlive =
      (this.versionMinor === 1 ? !this.connectionClose : this.connectionKeepAlive) && !toEof && !upgrade;
    // An interim response is followed by the final one on the same connection, whatever it says.
    this.#keepAlive = keepAlive || (status < 200 && !upgrade);
    const fields = this.fields;
    this.fields = [];
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
    )(1, this.versionMinor, fields, undefined, undefined, status, this.statusMessage, upgrade, keepAlive);
    if (this.#state === State.Failed) return;
    if (upgrade) {
      this.#messageComplete();
      this.#state = State.Closed;
      this.connectionUpgrade = true;
      return;
    }
    if (noBody || skip === 1 || skip === 2) this.#messageComplete();
    else if (chunked) {
      this.#state = State.ChunkSize;
      this.#sectionBytes = 0;
    } else if (this.contentLength >= 0) {
      this.#remaining = this.contentLength;
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
    const trailers = this.fields;
    this.fields = [];
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
