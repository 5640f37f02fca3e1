import {
  createCipheriv,
  createDecipheriv,
  createHmac,
  hkdfSync,
  randomBytes,
  timingSafeEqual,
} from 'node:crypto';

/**
 * The value a session persists (GEP-1619's cookie or header), sealed: AES-256-CTR under a random IV, then
 * HMAC-SHA256 over version, IV and ciphertext (encrypt-then-MAC, the tag cut to 16 bytes), in base64url. A client
 * can neither read which cluster and endpoint it is pinned to nor forge a value that steers it elsewhere. The value
 * carries everything a pin needs (no store): any replica with the same key, and this one after a restart, honours it.
 *
 * Layout: version (1) | IV (16) | ciphertext | tag (16). Plaintext: issued-at (u32, Unix seconds) | backend
 * (u32, FNV-1a of the backend id) | cluster length (u8) | cluster | endpoint length (u8) | endpoint (`address:port`).
 */
export interface SessionPin {
  /** FNV-1a of the BackendCluster id (`backendHash`): a value is honoured only for the backend it was issued for. */
  readonly backend: number;
  readonly cluster: string;
  /** The endpoint's key, `address:port`. */
  readonly endpoint: string;
  /** Unix seconds; the absolute timeout counts from here. */
  readonly issuedAtS: number;
}

/** Why a value was ignored (the request gets a fresh pick; the metric's `reason` label). */
export type IgnoredReason = 'oversized' | 'malformed' | 'forged' | 'expired' | 'other-backend';

/** Values longer than this (base64url characters) are not even decoded. */
export const MAX_SESSION_VALUE = 512;

const VERSION = 1;
const IV_BYTES = 16;
const TAG_BYTES = 16;
const MIN_BYTES = 1 + IV_BYTES + 4 + 4 + 1 + 1 + TAG_BYTES;
/** Shortest secret accepted from a key file: 32 characters (a base64 of 24 random bytes or more). */
export const MIN_SECRET_LENGTH = 32;

interface DerivedKey {
  readonly encryption: Buffer;
  readonly mac: Buffer;
}

function derive(secret: Buffer): DerivedKey {
  const salt = Buffer.from('clusterset-gateway session persistence');
  return {
    encryption: Buffer.from(hkdfSync('sha256', secret, salt, 'aes-256-ctr', 32)),
    mac: Buffer.from(hkdfSync('sha256', secret, salt, 'hmac-sha256', 32)),
  };
}

/**
 * Seals and opens session values. The first secret seals; every secret opens (a key file's later lines are the
 * keys being rotated out). `nowMs`: the wall clock, since values travel between replicas and restarts.
 */
export class SessionTokens {
  readonly #keys: readonly DerivedKey[];
  readonly #nowMs: () => number;

  constructor(secrets: readonly Buffer[], nowMs: () => number = Date.now) {
    if (secrets.length === 0) throw new Error('session persistence needs at least one key');
    this.#keys = secrets.map(derive);
    this.#nowMs = nowMs;
  }

  /** A fresh value pinning `cluster` and `endpoint` of `backend`, issued now; undefined when it would not fit. */
  seal(backend: number, cluster: string, endpoint: string): string | undefined {
    const clusterBytes = Buffer.from(cluster, 'utf8');
    const endpointBytes = Buffer.from(endpoint, 'utf8');
    if (clusterBytes.length > 255 || endpointBytes.length > 255) return undefined;
    const plain = Buffer.allocUnsafe(4 + 4 + 1 + clusterBytes.length + 1 + endpointBytes.length);
    plain.writeUInt32BE(Math.floor(this.#nowMs() / 1000) >>> 0, 0);
    plain.writeUInt32BE(backend >>> 0, 4);
    plain[8] = clusterBytes.length;
    clusterBytes.copy(plain, 9);
    plain[9 + clusterBytes.length] = endpointBytes.length;
    endpointBytes.copy(plain, 10 + clusterBytes.length);
    const key = this.#keys[0]!;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-ctr', key.encryption, iv);
    const body = Buffer.concat([Buffer.of(VERSION), iv, cipher.update(plain), cipher.final()]);
    const tag = createHmac('sha256', key.mac).update(body).digest().subarray(0, TAG_BYTES);
    const value = Buffer.concat([body, tag]).toString('base64url');
    return value.length <= MAX_SESSION_VALUE ? value : undefined;
  }

  /**
   * The pin a value carries, or why it is ignored: too long, not ours in shape, a tag no key makes (forged, or
   * sealed with a key this gateway does not have), issued for another backend than `backend` (undefined: any;
   * the caller matches the pin's `backend`), or older than `absoluteTimeoutMs`.
   */
  open(
    value: string,
    backend: number | undefined,
    absoluteTimeoutMs: number | undefined,
  ): SessionPin | IgnoredReason {
    if (value.length > MAX_SESSION_VALUE) return 'oversized';
    if (value.length < Math.ceil((MIN_BYTES * 4) / 3) || !/^[A-Za-z0-9_-]+$/.test(value)) return 'malformed';
    const bytes = Buffer.from(value, 'base64url');
    if (bytes.length < MIN_BYTES || bytes[0] !== VERSION) return 'malformed';
    const body = bytes.subarray(0, bytes.length - TAG_BYTES);
    const tag = bytes.subarray(bytes.length - TAG_BYTES);
    let key: DerivedKey | undefined;
    for (const candidate of this.#keys) {
      const expected = createHmac('sha256', candidate.mac).update(body).digest().subarray(0, TAG_BYTES);
      if (timingSafeEqual(expected, tag)) {
        key = candidate;
        break;
      }
    }
    if (key === undefined) return 'forged';
    const decipher = createDecipheriv('aes-256-ctr', key.encryption, body.subarray(1, 1 + IV_BYTES));
    const plain = Buffer.concat([decipher.update(body.subarray(1 + IV_BYTES)), decipher.final()]);
    // A tag we made over a layout we did not: only a bug or a key shared with another program gets here.
    if (plain.length < 10) return 'malformed';
    const clusterLength = plain[8]!;
    const endpointAt = 9 + clusterLength;
    if (endpointAt >= plain.length || endpointAt + 1 + plain[endpointAt]! !== plain.length)
      return 'malformed';
    const issuedAtS = plain.readUInt32BE(0);
    const issuedFor = plain.readUInt32BE(4);
    if (backend !== undefined && issuedFor !== backend >>> 0) return 'other-backend';
    if (absoluteTimeoutMs !== undefined && this.#nowMs() - issuedAtS * 1000 >= absoluteTimeoutMs)
      return 'expired';
    return {
      backend: issuedFor,
      cluster: plain.toString('utf8', 9, endpointAt),
      endpoint: plain.toString('utf8', endpointAt + 1),
      issuedAtS,
    };
  }
}

/** FNV-1a (32 bits) of a backend id: what a value names its backend by (the tag, not the hash, is the security). */
export function backendHash(id: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    hash ^= id.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/**
 * The secrets of a `--session-key-file`: one per line (blank lines and `#` comments skipped), the first sealing,
 * each at least MIN_SECRET_LENGTH characters. Throws with a message naming the problem (never the secret).
 */
export function parseSessionKeyFile(text: string, file: string): Buffer[] {
  const secrets = text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  if (secrets.length === 0) throw new Error(`--session-key-file ${file}: no key in the file`);
  secrets.forEach((secret, i) => {
    if (secret.length < MIN_SECRET_LENGTH)
      throw new Error(
        `--session-key-file ${file}: key on non-empty line ${i + 1} is shorter than ${MIN_SECRET_LENGTH} characters`,
      );
  });
  return secrets.map((secret) => Buffer.from(secret, 'utf8'));
}

/** A key for this process alone (no --session-key-file): values survive no restart and no other replica. */
export function generatedSessionSecret(): Buffer {
  return randomBytes(32);
}
