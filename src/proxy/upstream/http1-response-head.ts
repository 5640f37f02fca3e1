/**
 * The response head of http1-response-parser.ts: the status line and header fields of one message as RFC 9112
 * and llhttp (without lenient flags) accept them, and what the framing needs of them (Content-Length,
 * Transfer-Encoding, the Connection tokens). The parser's state machine (reads split anywhere, the body framings,
 * the trailers) extends this class: one object per connection either way.
 */

/** RFC 9110 token characters, by char code. */
const TOKEN = (() => {
  const table = new Uint8Array(256);
  for (const c of "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") {
    table[c.charCodeAt(0)] = 1;
  }
  return table;
})();
const DIGITS = /^\d{1,15}$/;

export type ParserError = Error & { code: string; bytesParsed?: number; reason?: string };

export function parseError(code: string, reason: string): ParserError {
  return Object.assign(new Error(`Parse Error: ${reason}`), { code, reason });
}

/** The head of the message being read: filled line by line, read by the framing once the head is complete. */
export class ResponseHead {
  protected statusSeen = false;
  protected versionMinor = 1;
  protected statusCode = 0;
  protected statusMessage = '';
  /** Names and values, in order, of the head (or the trailer section) read so far. */
  protected fields: string[] = [];
  protected contentLength = -1;
  protected transferEncoding: string | undefined;
  protected connectionClose = false;
  protected connectionKeepAlive = false;
  protected connectionUpgrade = false;

  /** Forgets the last message's head. */
  protected resetHead(): void {
    this.statusSeen = false;
    this.fields = [];
    this.contentLength = -1;
    this.transferEncoding = undefined;
    this.connectionClose = false;
    this.connectionKeepAlive = false;
    this.connectionUpgrade = false;
  }

  /** `HTTP-version SP 3DIGIT [SP reason-phrase]` from `start` to `end` of `text`; the error that refuses it. */
  protected statusLine(text: string, start: number, end: number): ParserError | undefined {
    if (
      end - start < 12 ||
      !text.startsWith('HTTP/1.', start) ||
      (text.charCodeAt(start + 7) !== 49 && text.charCodeAt(start + 7) !== 48) ||
      text.charCodeAt(start + 8) !== 32
    ) {
      return text.startsWith('HTTP/', start)
        ? parseError('HPE_INVALID_VERSION', 'Invalid HTTP version')
        : parseError('HPE_INVALID_CONSTANT', 'Expected HTTP/');
    }
    this.versionMinor = text.charCodeAt(start + 7) - 48;
    let status = 0;
    for (let i = start + 9; i < start + 12; i++) {
      const digit = text.charCodeAt(i) - 48;
      if (digit < 0 || digit > 9) return parseError('HPE_INVALID_STATUS', 'Invalid status code');
      status = status * 10 + digit;
    }
    if (status < 100) return parseError('HPE_INVALID_STATUS', 'Invalid status code');
    let message = '';
    if (end > start + 12) {
      message = text.slice(start + 13, end);
      if (text.charCodeAt(start + 12) !== 32)
        return parseError('HPE_INVALID_STATUS', 'Invalid response status');
    }
    this.statusCode = status;
    this.statusMessage = message;
    this.statusSeen = true;
    return undefined;
  }

  /** One field line; `trailer`: of the trailer section, which says nothing about framing. */
  protected field(text: string, start: number, end: number, trailer: boolean): ParserError | undefined {
    const first = text.charCodeAt(start);
    if (first === 32 || first === 9) {
      return parseError('HPE_INVALID_HEADER_TOKEN', 'Unexpected whitespace after header value (obs-fold)');
    }
    const colon = text.indexOf(':', start);
    if (colon <= start || colon >= end)
      return parseError('HPE_INVALID_HEADER_TOKEN', 'Invalid header field char');
    for (let i = start; i < colon; i++) {
      if (TOKEN[text.charCodeAt(i)] !== 1)
        return parseError('HPE_INVALID_HEADER_TOKEN', 'Invalid header token');
    }
    const name = text.slice(start, colon);
    let valueStart = colon + 1;
    let valueEnd = end;
    while (valueStart < valueEnd && isOws(text.charCodeAt(valueStart))) valueStart++;
    while (valueEnd > valueStart && isOws(text.charCodeAt(valueEnd - 1))) valueEnd--;
    const value = text.slice(valueStart, valueEnd);
    this.fields.push(name, value);
    if (trailer) return undefined;
    switch (name.length) {
      case 10:
        if (isNamed(name, 'connection')) this.#connectionTokens(value);
        break;
      case 14:
        if (isNamed(name, 'content-length')) {
          if (this.contentLength >= 0)
            return parseError('HPE_UNEXPECTED_CONTENT_LENGTH', 'Duplicate Content-Length');
          if (!DIGITS.test(value)) {
            return parseError('HPE_INVALID_CONTENT_LENGTH', 'Invalid character in Content-Length');
          }
          this.contentLength = Number(value);
        }
        break;
      case 17:
        if (isNamed(name, 'transfer-encoding')) {
          this.transferEncoding =
            this.transferEncoding === undefined ? value : `${this.transferEncoding}, ${value}`;
        }
        break;
      default:
        break;
    }
    return undefined;
  }

  #connectionTokens(value: string): void {
    if (value.length === 10 && isNamed(value, 'keep-alive')) this.connectionKeepAlive = true;
    else if (value.length === 5 && isNamed(value, 'close')) this.connectionClose = true;
    else this.#connectionList(value.toLowerCase());
  }

  #connectionList(value: string): void {
    for (const token of value.split(',')) {
      const lower = token.trim();
      if (lower === 'close') this.connectionClose = true;
      else if (lower === 'keep-alive') this.connectionKeepAlive = true;
      else if (lower === 'upgrade') this.connectionUpgrade = true;
    }
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
