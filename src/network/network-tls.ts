import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createSecureContext } from 'node:tls';
import type { Logger } from 'pino';
import type { NetworkIdentityConfig } from '../ir/route-table.ts';
import type { NetworkMetrics } from '../metrics/network-metrics.ts';
import { clusterIdOf, formatClusterId, type SpiffeClusterId } from './peer-identity.ts';

/** `--network-tls-cert`, `--network-tls-key`, `--network-trust-bundle`: PEM files, as cert-manager or SPIRE write them. */
export interface NetworkTlsFiles {
  readonly certFile: string;
  readonly keyFile: string;
  readonly trustBundleFile: string;
}

/** The gateway's identity and trust, as loaded: PEM strings (never logged) and the SPIFFE ID of its certificate. */
export interface NetworkTlsMaterial {
  readonly cert: string;
  readonly key: string;
  readonly ca: string;
  readonly id: SpiffeClusterId;
  /** Milliseconds since the epoch at which the certificate stops being valid. */
  readonly notAfterMs: number;
}

export interface NetworkTlsOptions {
  /** The three files; absent: the material comes from the routing table (`--network-tls-secret`) through `offer`. */
  readonly files?: NetworkTlsFiles;
  /** A certificate this close to its end is reported (log, problem). Default 7 days. */
  readonly expiryWarningMs?: number;
  readonly logger: Logger;
  readonly metrics?: NetworkMetrics;
}

/** What /config_dump shows of the identity: where it comes from, who it is, when it ends. Never PEM. */
export interface NetworkTlsReport {
  readonly source: string;
  readonly id?: string;
  readonly notAfter?: string;
  readonly expiresInSeconds?: number;
  readonly problems: readonly string[];
}

export class NetworkTlsError extends Error {
  readonly code = 'CSG_NETWORK_TLS';
}

/** How often the files are read again: a mounted Secret changes by a symlink swap, which a watch may miss. */
const RELOAD_INTERVAL_MS = 1_000;
/** How often the time left is measured again (metric, and a log line when it crosses the threshold). */
const EXPIRY_CHECK_MS = 60_000;
const DEFAULT_EXPIRY_WARNING_MS = 7 * 24 * 3600 * 1000;

type ExpiryState = 'valid' | 'expiring' | 'expired';

/**
 * The network gateway's certificate, key and trust bundle: from files read again every second, or from a
 * Secret (and ConfigMap) the routing table carries. A changed set that is usable replaces the old one for new
 * connections (listeners call setSecureContext, the tunnel pool opens new sessions with it); connections open
 * keep theirs, so nothing is dropped. An unusable set (unreadable, key not matching, no cluster SPIFFE ID) is
 * logged and reported, and the last good one stays. Errors name the file or object, never its content.
 */
export class NetworkTls {
  #source: string;
  readonly #files: NetworkTlsFiles | undefined;
  readonly #logger: Logger;
  readonly #metrics: NetworkMetrics | undefined;
  readonly #warningMs: number;
  readonly #listeners = new Set<(material: NetworkTlsMaterial) => void>();
  #material: NetworkTlsMaterial | undefined;
  #lastText = '';
  #timers: NodeJS.Timeout[] = [];
  #lastError = '';
  #expiry: ExpiryState = 'valid';

  /** With files: throws NetworkTlsError when they cannot give a usable identity at start. */
  constructor(options: NetworkTlsOptions) {
    this.#files = options.files;
    this.#source = options.files ? options.files.certFile : 'Secret';
    this.#logger = options.logger.child({ component: 'network-tls' });
    this.#metrics = options.metrics;
    this.#warningMs = options.expiryWarningMs ?? DEFAULT_EXPIRY_WARNING_MS;
    if (options.files !== undefined) {
      const files = options.files;
      this.#take(loadMaterial(readAll(files), sourceNames(files)));
    }
  }

  /** The set in force; throws NetworkTlsError while there is none yet (a Secret not found). */
  get material(): NetworkTlsMaterial {
    if (this.#material === undefined)
      throw new NetworkTlsError(`no network certificate yet: ${this.#lastError || 'waiting for its Secret'}`);
    return this.#material;
  }

  get ready(): boolean {
    return this.#material !== undefined;
  }

  /** Called with every new usable set. */
  onChange(listener: (material: NetworkTlsMaterial) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Starts reading the files again every second (with files) and measuring the time left every minute. */
  watch(): void {
    if (this.#timers.length > 0) return;
    if (this.#files !== undefined) this.#timers.push(setInterval(() => this.reload(), RELOAD_INTERVAL_MS));
    this.#timers.push(setInterval(() => this.#checkExpiry(), EXPIRY_CHECK_MS));
    for (const timer of this.#timers) timer.unref();
  }

  /** Reads the files now; true when a new usable set replaced the old one. */
  reload(): boolean {
    const files = this.#files;
    if (files === undefined) return false;
    return this.#attempt(() => loadMaterial(readAll(files), sourceNames(files)));
  }

  /** The Secret-backed set the routing table carries now; true when a new usable set replaced the old one. */
  offer(config: NetworkIdentityConfig): boolean {
    this.#source = config.secret;
    return this.#attempt(() => {
      if (config.problem !== undefined) throw new NetworkTlsError(config.problem);
      const parts = [config.certPem ?? '', config.keyPem ?? '', config.caPem ?? ''] as const;
      return loadMaterial(parts, {
        cert: `${config.secret} tls.crt`,
        key: `${config.secret} tls.key`,
        ca: config.trustBundle,
      });
    });
  }

  /** For /config_dump: the source, identity and time left, and what is wrong (kept last good, expiring). */
  describe(now = Date.now()): NetworkTlsReport {
    const material = this.#material;
    const problems = this.#lastError
      ? [
          `network certificate not (re)loaded: ${this.#lastError}; ${material ? 'the last good one stays' : 'none in use'}`,
        ]
      : [];
    if (material === undefined) return { source: this.#source, problems };
    const left = material.notAfterMs - now;
    const state = expiryState(left, this.#warningMs);
    if (state !== 'valid') problems.push(expiryMessage(state, material, this.#source));
    return {
      source: this.#source,
      id: formatClusterId(material.id),
      notAfter: new Date(material.notAfterMs).toISOString(),
      expiresInSeconds: Math.round(left / 1000),
      problems,
    };
  }

  close(): void {
    for (const timer of this.#timers) clearInterval(timer);
    this.#timers = [];
  }

  #attempt(load: () => { text: string; material: NetworkTlsMaterial }): boolean {
    let loaded: { text: string; material: NetworkTlsMaterial };
    try {
      loaded = load();
    } catch (err) {
      const message = (err as Error).message;
      if (message !== this.#lastError) {
        this.#lastError = message;
        this.#logger.error({ err: message }, 'network TLS material not loaded; the last good set stays');
      }
      return false;
    }
    this.#lastError = '';
    if (loaded.text === this.#lastText) return false;
    const first = this.#material === undefined;
    this.#take(loaded);
    this.#logger.info(
      { id: formatClusterId(loaded.material.id) },
      first ? 'network TLS material loaded' : 'network TLS material reloaded',
    );
    for (const listener of this.#listeners) listener(loaded.material);
    return true;
  }

  #take(loaded: { text: string; material: NetworkTlsMaterial }): void {
    this.#lastText = loaded.text;
    this.#material = loaded.material;
    this.#expiry = 'valid';
    this.#checkExpiry();
  }

  /** The metric always; a log line only when the state changes (valid, expiring, expired). */
  #checkExpiry(): void {
    const material = this.#material;
    if (material === undefined) return;
    const left = material.notAfterMs - Date.now();
    this.#metrics?.certificateExpiry.set({ source: this.#source }, Math.round(left / 1000));
    const state = expiryState(left, this.#warningMs);
    if (state === this.#expiry) return;
    this.#expiry = state;
    if (state !== 'valid')
      this.#logger.warn(
        { notAfter: new Date(material.notAfterMs).toISOString() },
        expiryMessage(state, material, this.#source),
      );
  }
}

function expiryState(leftMs: number, warningMs: number): ExpiryState {
  return leftMs <= 0 ? 'expired' : leftMs < warningMs ? 'expiring' : 'valid';
}

function expiryMessage(state: ExpiryState, material: NetworkTlsMaterial, source: string): string {
  const when = new Date(material.notAfterMs).toISOString();
  return state === 'expired'
    ? `network certificate ${formatClusterId(material.id)} (${source}) expired at ${when}`
    : `network certificate ${formatClusterId(material.id)} (${source}) expires at ${when}`;
}

function sourceNames(files: NetworkTlsFiles): { cert: string; key: string; ca: string } {
  return { cert: files.certFile, key: files.keyFile, ca: files.trustBundleFile };
}

function readAll(files: NetworkTlsFiles): readonly [string, string, string] {
  return [readText(files.certFile), readText(files.keyFile), readText(files.trustBundleFile)];
}

function readText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw new NetworkTlsError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
  }
}

function loadMaterial(
  [cert, key, ca]: readonly [string, string, string],
  names: { readonly cert: string; readonly key: string; readonly ca: string },
): { text: string; material: NetworkTlsMaterial } {
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(cert);
  } catch {
    throw new NetworkTlsError(`${names.cert} is not a PEM certificate`);
  }
  try {
    createSecureContext({ cert, key, ca });
  } catch {
    throw new NetworkTlsError(
      `${names.key} does not match ${names.cert}, or ${names.ca} is not a PEM bundle`,
    );
  }
  const id = clusterIdOf(x509.subjectAltName);
  if (id === undefined) {
    throw new NetworkTlsError(
      `${names.cert} has no URI SAN spiffe://<trust-domain>/cluster/<name> (exactly one is needed)`,
    );
  }
  return {
    text: [cert, key, ca].join('\0'),
    material: { cert, key, ca, id, notAfterMs: Date.parse(x509.validTo) },
  };
}
