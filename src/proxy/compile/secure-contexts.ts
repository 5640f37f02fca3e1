import { createHash } from 'node:crypto';
import { createSecureContext, type SecureContext } from 'node:tls';

/** A listener's certificate material: every certificateRef's pair, and the client CA under frontend validation. */
export interface ContextMaterial {
  readonly cert: readonly string[];
  readonly key: readonly string[];
  readonly ca?: string;
}

/**
 * One session ID context for every context and server of every process: a resumed session must carry the same
 * one as the context that resumes it, whichever listener or worker issued it (node:tls's default is a hash of
 * the process's arguments, which a worker does not share with its primary's other children if they differ).
 */
export const SESSION_ID_CONTEXT = 'clusterset-gateway';

/**
 * The secure contexts of every HTTPS and TLS listener, one per distinct certificate material, kept across routing
 * tables: a table that keeps a listener's certificate keeps its context (no PEM parsed again, and connections
 * being set up keep theirs), and every context carries the process's one ticket key set (tls-ticket-keys.ts), so
 * a ticket issued under one listener's context resumes under any other's. A context no table compiled since the
 * last `sweep` is dropped.
 */
export class SecureContexts {
  readonly #contexts = new Map<string, SecureContext>();
  readonly #used = new Set<string>();
  #ticketKeys: Buffer;

  constructor(ticketKeys: Buffer) {
    this.#ticketKeys = ticketKeys;
  }

  get ticketKeys(): Buffer {
    return this.#ticketKeys;
  }

  /** The context for `material`, made once; throws what createSecureContext throws for bad material. */
  get(material: ContextMaterial): SecureContext {
    const id = materialId(material);
    this.#used.add(id);
    let context = this.#contexts.get(id);
    if (context === undefined) {
      context = createSecureContext({
        cert: [...material.cert],
        key: [...material.key],
        ...(material.ca === undefined ? {} : { ca: material.ca }),
        ticketKeys: this.#ticketKeys,
        sessionIdContext: SESSION_ID_CONTEXT,
      });
      this.#contexts.set(id, context);
    }
    return context;
  }

  /** New ticket keys for every context (a rotation); connections already set up keep what they have. */
  setTicketKeys(keys: Buffer): void {
    this.#ticketKeys = keys;
    for (const context of this.#contexts.values()) context.context.setTicketKeys(keys);
  }

  /** Drops the contexts no `get` asked for since the last sweep (the tables in force asked for the rest). */
  sweep(): void {
    for (const id of this.#contexts.keys()) if (!this.#used.has(id)) this.#contexts.delete(id);
    this.#used.clear();
  }

  get size(): number {
    return this.#contexts.size;
  }
}

/** A digest of the material, so the map holds no key material as its keys. */
function materialId(material: ContextMaterial): string {
  const hash = createHash('sha256');
  for (const cert of material.cert) hash.update(cert).update('\0');
  hash.update('\x01');
  for (const key of material.key) hash.update(key).update('\0');
  hash.update('\x01');
  hash.update(material.ca ?? '');
  return hash.digest('base64');
}
