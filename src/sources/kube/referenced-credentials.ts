import type { Logger } from 'pino';
import { type KubeApiClient, KubeApiError } from '../../kube/api-client.ts';
import { Backoff } from '../../kube/backoff.ts';
import { isDataTrimmed, type KeepsData, type Normalize, normalizeObject } from '../../kube/normalize.ts';
import { type CredentialReferences, credentialReferences } from '../../snapshot/credential-references.ts';
import { isRecord } from '../../snapshot/json-object.ts';
import type { AnyResource } from '../../snapshot/resources.ts';
import { objectKey } from '../../snapshot/snapshot.ts';

export type CredentialKind = 'Secret' | 'ConfigMap';

/** What this module needs of a kind's Reflector. */
export interface CredentialStore {
  objects(): Iterable<{ readonly object: AnyResource }>;
  get(key: string): AnyResource | undefined;
  /** Stores `obj` as the object's current version, normalised again; true when that changed what is stored. */
  refresh(obj: unknown): boolean;
}

export interface ReferencedCredentialsOptions {
  readonly client: KubeApiClient;
  readonly logger: Logger;
  /** The current objects of CREDENTIAL_REFERRING_KINDS (Gateways, ListenerSets, BackendTLSPolicies). */
  readonly referringObjects: () => Iterable<AnyResource>;
  readonly storeOf: (kind: CredentialKind) => CredentialStore | undefined;
  /** The fetches started by `settle` are over (done, or failed and left for a retry): settle again. */
  readonly onSettled: () => void;
  /** GETs at a time. Default 8. */
  readonly concurrency?: number;
  /** Referenced by the gateway's own flags (the network gateway's Secret and trust bundle): always kept. */
  readonly ownCredentials?: CredentialReferences;
  readonly retryInitialMs?: number;
  readonly retryMaxMs?: number;
}

const PLURAL: Readonly<Record<CredentialKind, string>> = { Secret: 'secrets', ConfigMap: 'configmaps' };

/**
 * Keeps the data of only the Secrets and ConfigMaps something references (issue 28): a cluster holds many
 * Secrets that are not ours (service account tokens, Helm releases, other apps' credentials), each up to 1 MiB,
 * and the watch of every Secret is what tells us one exists. Unreferenced ones are stored as their identity alone
 * (normalize.ts); the references are read from the stored Gateways, ListenerSets and BackendTLSPolicies and
 * refreshed when those change. An object that starts referencing a trimmed one makes `settle` fetch it (one
 * GET, as the informer's own object would have been read) before the source builds the next snapshot, so
 * translation never sees a referenced Secret without its data; one no longer referenced is trimmed again.
 * Istio and Envoy Gateway keep every watched Secret in full in their informer caches; controller-runtime's
 * metadata-only watches are the same idea as this, without a second protocol for the API test server.
 */
export class ReferencedCredentials {
  readonly #o: ReferencedCredentialsOptions;
  readonly #log: Logger;
  #references: CredentialReferences | undefined;
  /** `Kind namespace/name` → the GET in flight or queued. */
  readonly #queued = new Map<string, { readonly kind: CredentialKind; readonly key: string }>();
  readonly #inFlight = new Set<string>();
  /** Fetches that failed: not tried again until the retry timer. */
  readonly #failed = new Map<string, string>();
  readonly #backoff: Backoff;
  #retry: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(options: ReferencedCredentialsOptions) {
    this.#o = options;
    this.#log = options.logger;
    this.#backoff = new Backoff(options.retryInitialMs ?? 1000, options.retryMaxMs ?? 30_000);
  }

  /** True when a Secret's or ConfigMap's data is referenced now (the references are read again if stale). */
  readonly keepsData: KeepsData = (kind, key) => {
    this.#references ??= credentialReferences(this.#o.referringObjects());
    const own = this.#o.ownCredentials;
    if (own !== undefined && (kind === 'Secret' ? own.secrets : own.configMaps).has(key)) return true;
    return (kind === 'Secret' ? this.#references.secrets : this.#references.configMaps).has(key);
  };

  /** The Reflector normalisation of Secrets and ConfigMaps: identity only unless referenced. */
  readonly normalize: Normalize = (value, apiVersion, kind) =>
    normalizeObject(value, apiVersion, kind, this.keepsData);

  /** A Gateway, ListenerSet or BackendTLSPolicy changed: what is referenced may have. */
  referencesChanged(): void {
    this.#references = undefined;
  }

  /** Problems to list (a GET that keeps failing), naming the object, never its data. */
  problems(): string[] {
    return [...this.#failed.values()];
  }

  /**
   * Makes the stores hold data for exactly what is referenced: trims what no longer is, and starts fetching what
   * is referenced but was stored trimmed. True when nothing is being fetched, so a snapshot may be built; else
   * `onSettled` is called once the fetches are over.
   */
  settle(): boolean {
    if (this.#stopped) return true;
    for (const kind of ['Secret', 'ConfigMap'] as const) {
      const store = this.#o.storeOf(kind);
      if (!store) continue;
      const stale: AnyResource[] = [];
      for (const { object } of store.objects()) {
        const key = objectKey(object);
        const referenced = this.keepsData(kind, key);
        const trimmed = isDataTrimmed(object);
        const id = `${kind} ${key}`;
        if (referenced && trimmed && !this.#failed.has(id) && !this.#inFlight.has(id))
          this.#queued.set(id, { kind, key });
        else if (!referenced && !trimmed) stale.push(object);
      }
      for (const object of stale) store.refresh(object);
    }
    this.#pump();
    return this.#inFlight.size === 0;
  }

  stop(): void {
    this.#stopped = true;
    this.#queued.clear();
    clearTimeout(this.#retry);
  }

  #pump(): void {
    const concurrency = this.#o.concurrency ?? 8;
    for (const [id, target] of this.#queued) {
      if (this.#inFlight.size >= concurrency) return;
      this.#queued.delete(id);
      this.#inFlight.add(id);
      void this.#fetch(id, target.kind, target.key);
    }
  }

  async #fetch(id: string, kind: CredentialKind, key: string): Promise<void> {
    const [namespace, name] = key.split('/') as [string, string];
    const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/${PLURAL[kind]}/${encodeURIComponent(name)}`;
    try {
      const fetched = await this.#o.client.request('GET', path);
      const store = this.#o.storeOf(kind);
      const current = store?.get(key);
      // A watch event that arrived meanwhile carried the data already (the key was referenced): it wins.
      if (store && current && isDataTrimmed(current) && sameObject(current, fetched)) store.refresh(fetched);
      if (this.#failed.delete(id)) this.#log.info({ kind, object: key }, 'referenced object fetched');
      if (this.#failed.size === 0) this.#backoff.reset();
    } catch (err) {
      // 404: deleted since it was listed; the watch's DELETED event follows and the reference reports NotFound.
      if (!(err instanceof KubeApiError && err.statusCode === 404)) this.#failedOnce(id, kind, key, err);
    } finally {
      this.#inFlight.delete(id);
      this.#pump();
      if (this.#inFlight.size === 0 && !this.#stopped) this.#o.onSettled();
    }
  }

  #failedOnce(id: string, kind: CredentialKind, key: string, err: unknown): void {
    // KubeApiError messages carry method, path and the server's message: never an object's data.
    const message = err instanceof Error ? err.message : String(err);
    if (!this.#failed.has(id))
      this.#log.warn({ kind, object: key, err: message }, 'cannot fetch referenced object');
    this.#failed.set(id, `${kind} ${key} is referenced but could not be read: ${message}`);
    if (this.#retry) return;
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      this.#failed.clear();
      if (!this.#stopped) this.#o.onSettled();
    }, this.#backoff.next());
    this.#retry.unref();
  }
}

/** The GET answered for the object stored (not one deleted and created again under the same name). */
function sameObject(stored: AnyResource, fetched: unknown): boolean {
  const meta = isRecord(fetched) && isRecord(fetched.metadata) ? fetched.metadata : undefined;
  if (!meta) return false;
  return stored.metadata.uid === undefined || meta.uid === undefined || stored.metadata.uid === meta.uid;
}
