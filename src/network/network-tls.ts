import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createSecureContext } from 'node:tls';
import type { Logger } from 'pino';
import type { NetworkMetrics } from '../metrics/network-metrics.ts';
import { clusterIdOf, type SpiffeClusterId } from './peer-identity.ts';

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

export class NetworkTlsError extends Error {
  readonly code = 'CSG_NETWORK_TLS';
}

/** How often the files are read again: a mounted Secret changes by a symlink swap, which a watch may miss. */
const RELOAD_INTERVAL_MS = 1_000;
/** A certificate this close to its end is warned about at every load. */
const EXPIRY_WARNING_MS = 7 * 24 * 3600 * 1000;

/**
 * The network gateway's certificate, key and trust bundle, read from files and read again every second. A
 * changed set that is usable replaces the old one for new connections (listeners call setSecureContext, the
 * tunnel pool opens new sessions with it); connections open keep theirs, so nothing is dropped. An unusable set
 * (unreadable, key not matching, no cluster SPIFFE ID) is logged and the last good one stays. Errors name the
 * file, never its content.
 */
export class NetworkTls {
  readonly #files: NetworkTlsFiles;
  readonly #logger: Logger;
  readonly #metrics: NetworkMetrics | undefined;
  readonly #listeners = new Set<(material: NetworkTlsMaterial) => void>();
  #material: NetworkTlsMaterial;
  #lastText: string;
  #timer: NodeJS.Timeout | undefined;
  #lastError = '';

  /** Throws NetworkTlsError when the files cannot give a usable identity at start. */
  constructor(files: NetworkTlsFiles, logger: Logger, metrics?: NetworkMetrics) {
    this.#files = files;
    this.#logger = logger.child({ component: 'network-tls' });
    this.#metrics = metrics;
    const { text, material } = loadMaterial(files);
    this.#material = material;
    this.#lastText = text;
    this.#report(material);
  }

  get material(): NetworkTlsMaterial {
    return this.#material;
  }

  /** Called with every new usable set. */
  onChange(listener: (material: NetworkTlsMaterial) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Starts reading the files again every second. */
  watch(): void {
    this.#timer ??= setInterval(() => this.reload(), RELOAD_INTERVAL_MS);
    this.#timer.unref();
  }

  /** Reads the files now; true when a new usable set replaced the old one. */
  reload(): boolean {
    let loaded: { text: string; material: NetworkTlsMaterial };
    try {
      const text = readAll(this.#files);
      if (text === this.#lastText) return false;
      loaded = loadMaterial(this.#files);
    } catch (err) {
      const message = (err as Error).message;
      if (message !== this.#lastError) {
        this.#lastError = message;
        this.#logger.error({ err: message }, 'network TLS files not reloaded; the last good ones stay');
      }
      return false;
    }
    this.#lastError = '';
    this.#lastText = loaded.text;
    this.#material = loaded.material;
    this.#report(loaded.material);
    this.#logger.info(
      { id: `spiffe://${loaded.material.id.trustDomain}/cluster/${loaded.material.id.cluster}` },
      'network TLS files reloaded',
    );
    for (const listener of this.#listeners) listener(loaded.material);
    return true;
  }

  close(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #report(material: NetworkTlsMaterial): void {
    const leftMs = material.notAfterMs - Date.now();
    this.#metrics?.certificateExpiry.set({ file: this.#files.certFile }, Math.round(leftMs / 1000));
    if (leftMs < EXPIRY_WARNING_MS) {
      this.#logger.warn(
        { file: this.#files.certFile, notAfter: new Date(material.notAfterMs).toISOString() },
        leftMs < 0 ? 'network certificate has expired' : 'network certificate expires within 7 days',
      );
    }
  }
}

function readAll(files: NetworkTlsFiles): string {
  return [files.certFile, files.keyFile, files.trustBundleFile].map((f) => readText(f)).join('\0');
}

function readText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw new NetworkTlsError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
  }
}

function loadMaterial(files: NetworkTlsFiles): { text: string; material: NetworkTlsMaterial } {
  const cert = readText(files.certFile);
  const key = readText(files.keyFile);
  const ca = readText(files.trustBundleFile);
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(cert);
  } catch {
    throw new NetworkTlsError(`${files.certFile} is not a PEM certificate`);
  }
  try {
    createSecureContext({ cert, key, ca });
  } catch {
    throw new NetworkTlsError(
      `${files.keyFile} does not match ${files.certFile}, or ${files.trustBundleFile} is not a PEM bundle`,
    );
  }
  const id = clusterIdOf(x509.subjectAltName);
  if (id === undefined) {
    throw new NetworkTlsError(
      `${files.certFile} has no URI SAN spiffe://<trust-domain>/cluster/<name> (exactly one is needed)`,
    );
  }
  return {
    text: [cert, key, ca].join('\0'),
    material: { cert, key, ca, id, notAfterMs: Date.parse(x509.validTo) },
  };
}
