import { isDeepStrictEqual } from 'node:util';
import type { Logger } from 'pino';
import type { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { TranslateOptions } from '../gateway/options.ts';
import { TranslationMemo } from '../gateway/route-memo.ts';
import { type TranslationResult, translateInSteps } from '../gateway/translate.ts';
import type { ObjectKey } from '../ir/config-warning.ts';
import type { BackendCluster, RouteTable } from '../ir/route-table.ts';
import { type StatusUpdate, statusKey } from '../ir/status.ts';
import { runInSlices, type SliceClock, type Steps } from '../ir/steps.ts';
import { backendOwnersOf, refreshBackends } from '../mcs/backend-refresh.ts';
import { createTranslationMetrics } from '../metrics/controller-metrics.ts';
import { sameJsonValue } from '../snapshot/json-object.ts';
import { objectKey, type SliceChange, type Snapshot } from '../snapshot/snapshot.ts';
import { diffSnapshots, type SnapshotDiff } from '../snapshot/snapshot-diff.ts';
import { shareUnchanged } from './result-delta.ts';
import { statusSummary } from './status-summary.ts';
import { backendIdsByOwner, compareTables, withBackends } from './table-diff.ts';

export interface ReconcilerOptions {
  /** Called with every snapshot so options that depend on it (the cluster's own name) can follow it. */
  readonly translateOptions: (snapshot: Snapshot) => TranslateOptions;
  /** Applies a translation's routing table (swaps the proxy's table). Errors are logged, never thrown past here. */
  readonly apply: (result: TranslationResult, snapshot: Snapshot) => Promise<void>;
  /**
   * Replaces the endpoint sets of `backends` in the table in force (`table` is the whole new table, for late
   * readers): Envoy's EDS next to its route config. Without it, every change is applied with `apply`.
   */
  readonly applyEndpoints?: (backends: readonly BackendCluster[], table: RouteTable) => Promise<void>;
  /**
   * Hands an applied translation's statuses to the status writer. Not awaited: status I/O (a slow API server)
   * must never hold back the next routing table. Errors are logged.
   */
  readonly publishStatuses?: (result: TranslationResult) => Promise<void>;
  /**
   * A translation runs in slices of this many milliseconds with the event loop free between them (default 5; 0:
   * in one go), so that requests keep being served while 10,000 routes are translated.
   */
  readonly translationSliceMs?: number;
  readonly sliceClock?: SliceClock;
  /**
   * Where a full translation runs; default: translate() on this thread, in slices of `translationSliceMs`. main.ts
   * hands it to a worker thread (app/translation-thread.ts) so that it cannot delay a request at all.
   */
  readonly translate?: (snapshot: Snapshot, options: TranslateOptions) => Promise<TranslationResult>;
  readonly logger: Logger;
  readonly registry: Registry;
}

/**
 * Turns snapshots into applied routing tables, one at a time: while a table is being applied, newer
 * snapshots coalesce into the latest one, so a burst of changes costs a couple of translations.
 */
export class Reconciler {
  readonly #options: ReconcilerOptions;
  readonly #logger: Logger;
  readonly #translations: Counter<'result'>;
  readonly #duration: Histogram;
  readonly #warningsGauge: Gauge<'code'>;
  readonly #updates: Counter<'kind'>;
  /** The warnings logged and counted now: their line, and their code. */
  #warnings: ReadonlyMap<string, string> = new Map();
  /** Each route's translation kept while nothing else changes (inline translation; the thread keeps its own). */
  readonly #memo = new TranslationMemo();
  #pending: Snapshot | undefined;
  /** The pending snapshot's slice changes from the snapshot before every one it replaced (see submit). */
  #pendingDelta: SliceDelta | undefined;
  #running: Promise<void> | undefined;
  #last: { readonly snapshot: Snapshot; readonly result: TranslationResult } | undefined;
  #statusByKey = new Map<string, StatusUpdate>();
  /** The statuses #statusByKey holds, as the last result listed them. */
  #statuses: readonly StatusUpdate[] = [];
  readonly #sliceMs: number;

  constructor(options: ReconcilerOptions) {
    this.#options = options;
    this.#logger = options.logger.child({ component: 'reconciler' });
    const metrics = createTranslationMetrics(options.registry);
    this.#translations = metrics.translations;
    this.#duration = metrics.duration;
    this.#warningsGauge = metrics.warnings;
    this.#updates = metrics.updates;
    this.#sliceMs = options.translationSliceMs ?? 5;
  }

  /** The last applied translation, for /config_dump. */
  get last(): { readonly snapshot: Snapshot; readonly result: TranslationResult } | undefined {
    return this.#last;
  }

  submit(snapshot: Snapshot): void {
    // A snapshot that replaces one not yet reconciled carries the changes of both, so that one made from the
    // table in force by slice changes alone is still known as such without a diff.
    const replaced = this.#pending;
    this.#pendingDelta =
      replaced === undefined
        ? snapshot.sliceDelta
        : composeDeltas(this.#pendingDelta, replaced, snapshot.sliceDelta);
    this.#pending = snapshot;
    this.#running ??= this.#drain().finally(() => {
      this.#running = undefined;
    });
  }

  /** Resolves when every submitted snapshot has been applied. */
  async settled(): Promise<void> {
    while (this.#running) await this.#running;
  }

  async #drain(): Promise<void> {
    while (this.#pending) {
      const snapshot = this.#pending;
      const delta = this.#pendingDelta;
      this.#pending = undefined;
      this.#pendingDelta = undefined;
      await this.#reconcile(snapshot, delta);
    }
  }

  async #reconcile(snapshot: Snapshot, delta: SliceDelta | undefined): Promise<void> {
    const last = this.#last;
    if (last !== undefined && this.#options.applyEndpoints !== undefined) {
      const diff: SnapshotDiff =
        delta?.base === last.snapshot
          ? { kind: 'slices', slices: delta.slices }
          : diffSnapshots(last.snapshot, snapshot);
      const endpoints = this.#endpointsOnly(last, snapshot, diff);
      if (endpoints !== undefined) {
        await this.#applyEndpoints(endpoints.backends, endpoints.result, snapshot);
        return;
      }
    }
    const stopTimer = this.#duration.startTimer();
    let result: TranslationResult;
    try {
      const options = this.#options.translateOptions(snapshot);
      if (this.#options.translate) {
        result = await this.#options.translate(snapshot, options);
      } else {
        result = await runInSlices(
          translateInSteps(snapshot, options, this.#memo),
          this.#sliceMs,
          this.#options.sliceClock,
        );
        // What the translation thread's deltas give (result-delta.ts): unchanged parts as the objects in force, so
        // the comparison below and the proxy's compile find them by identity.
        if (last !== undefined)
          result = await runInSlices(
            shareUnchanged(last.result, result),
            this.#sliceMs,
            this.#options.sliceClock,
          );
      }
    } catch (error) {
      // A translator bug must not take down the data plane: keep serving the last table.
      this.#translations.inc({ result: 'error' });
      this.#logger.error({ err: error }, 'translation failed; keeping the previous routing table');
      return;
    } finally {
      stopTimer();
    }
    this.#translations.inc({ result: 'ok' });
    await runInSlices(this.#logStatusChanges(result.statuses), this.#sliceMs, this.#options.sliceClock);
    this.#reportWarnings(result.warnings ?? []);
    const change =
      last !== undefined && this.#options.applyEndpoints !== undefined
        ? await runInSlices(
            compareTables(last.result.table, result.table),
            this.#sliceMs,
            this.#options.sliceClock,
          )
        : undefined;
    if (change !== undefined && change.kind !== 'routes') {
      await this.#applyEndpoints(change.backends, result, snapshot);
    } else {
      try {
        await this.#options.apply(result, snapshot);
        this.#last = { snapshot, result };
        this.#updates.inc({ kind: 'full' });
      } catch (error) {
        this.#logger.error({ err: error }, 'applying the routing table failed');
        return;
      }
    }
    this.#options.publishStatuses?.(result).catch((error: unknown) => {
      this.#logger.error({ err: error }, 'publishing statuses failed');
    });
  }

  /** Applies endpoint sets only (none: nothing to apply). Statuses cannot have changed on this path. */
  async #applyEndpoints(
    backends: readonly BackendCluster[],
    result: TranslationResult,
    snapshot: Snapshot,
  ): Promise<void> {
    try {
      if (backends.length > 0) await this.#options.applyEndpoints?.(backends, result.table);
      this.#last = { snapshot, result };
      this.#updates.inc({ kind: backends.length > 0 ? 'endpoints' : 'unchanged' });
    } catch (error) {
      this.#logger.error({ err: error }, 'applying endpoint changes failed');
    }
  }

  /**
   * When only EndpointSlices changed, the last translation with the affected backends resolved again; no route
   * is translated. Undefined when a full translation is needed: another kind changed, or a slice change can
   * move cluster properties that ClusterSelectionPolicies select by, or a backend changed in more than its
   * endpoints.
   */
  #endpointsOnly(
    last: { readonly snapshot: Snapshot; readonly result: TranslationResult },
    snapshot: Snapshot,
    diff: SnapshotDiff,
  ): { readonly backends: readonly BackendCluster[]; readonly result: TranslationResult } | undefined {
    if (diff.kind === 'other') return undefined;
    const policies = snapshot.byKey('ClusterSelectionPolicy').size > 0;
    if (
      policies &&
      diff.slices.some(
        (c) => !c.before || !c.after || !isDeepStrictEqual(c.before.metadata.labels, c.after.metadata.labels),
      )
    )
      return undefined;
    const table = last.result.table;
    const byOwner = backendIdsByOwner(table);
    const owners = new Set<ObjectKey>();
    for (const change of diff.slices) {
      for (const slice of [change.before, change.after]) {
        if (slice) for (const owner of backendOwnersOf(slice, snapshot)) owners.add(owner);
      }
    }
    const ids = [...owners].flatMap((owner) => byOwner.get(owner) ?? []);
    if (ids.length === 0) return { backends: [], result: last.result };
    const refresh = refreshBackends(
      snapshot,
      table.backends,
      ids,
      this.#options.translateOptions(snapshot).identity,
    );
    if (!refresh.ok) {
      this.#logger.debug({ reason: refresh.reason }, 'endpoint change needs a full translation');
      return undefined;
    }
    if (refresh.backends.length === 0) return { backends: [], result: last.result };
    // A new table: the one in force was published (/config_dump, a late worker, the last result) and stays as it is.
    const next = withBackends(table, refresh.backends);
    // The refreshed backends' warnings are replaced by their owner key (a prefix of the message would also
    // match `shop/web-2` for `shop/web`); warnings about other objects (routes, policies) stay.
    const warnings = [
      ...(last.result.warnings ?? []).filter((w) => w.owner === undefined || !owners.has(w.owner)),
      ...refresh.warnings,
    ];
    this.#reportWarnings(warnings);
    return {
      backends: refresh.backends,
      result: { ...last.result, table: next, warnings },
    };
  }

  /** The same warning comes from every route that uses a backend: log each once, while it lasts. */
  #reportWarnings(warnings: readonly { readonly code: string; readonly message: string }[]): void {
    const current = new Map(warnings.map((w) => [`${w.code}: ${w.message}`, w.code]));
    for (const line of current.keys()) if (!this.#warnings.has(line)) this.#logger.warn(line);
    this.#warnings = current;
    this.#warningsGauge.reset();
    for (const code of current.values()) this.#warningsGauge.inc({ code });
  }

  /**
   * In file mode the logs are where a user reads status, so every change of an object's status is logged.
   * Steps: a pause is possible after each status (10,000 routes have as many). A result whose statuses are the
   * last ones' objects where they did not change (result-delta.ts) costs a comparison per status, not a new index.
   */
  *#logStatusChanges(statuses: readonly StatusUpdate[]): Steps<void> {
    const before = this.#statuses;
    if (statuses === before) return;
    this.#statuses = statuses;
    if (before.length === statuses.length && this.#statusByKey.size === before.length) {
      const changed: number[] = [];
      let aligned = true;
      for (let i = 0; i < statuses.length && aligned; i++) {
        const update = statuses[i] as StatusUpdate;
        const was = before[i] as StatusUpdate;
        if (update === was) continue;
        aligned = statusKey(update) === statusKey(was);
        changed.push(i);
      }
      if (aligned) {
        for (const i of changed) {
          yield;
          const update = statuses[i] as StatusUpdate;
          const key = statusKey(update);
          const previous = this.#statusByKey.get(key);
          this.#statusByKey.set(key, update);
          if (!previous || !sameJsonValue(previous.status, update.status)) this.#logStatus(key, update);
        }
        return;
      }
    }
    const next = new Map(statuses.map((update) => [statusKey(update), update]));
    for (const [key, update] of next) {
      yield;
      const previous = this.#statusByKey.get(key);
      if (previous && sameJsonValue(previous.status, update.status)) continue;
      this.#logStatus(key, update);
    }
    for (const key of this.#statusByKey.keys()) {
      if (!next.has(key)) this.#logger.info({ object: key }, 'status removed');
    }
    this.#statusByKey = next;
  }

  #logStatus(key: string, update: StatusUpdate): void {
    // The whole status of a GatewayClass alone is ~1,800 characters; a summary, and the whole at debug level.
    this.#logger.info(
      {
        object: key,
        generation: update.generation,
        ...statusSummary(update.status),
        ...(this.#logger.isLevelEnabled('debug') ? { status: update.status } : {}),
      },
      'status changed',
    );
  }
}

interface SliceDelta {
  readonly base: Snapshot;
  readonly slices: readonly SliceChange[];
}

/**
 * `earlier` (middle's changes from its base) followed by `later` (changes from `middle`), as changes from
 * earlier's base; undefined when either is unknown.
 */
function composeDeltas(
  earlier: SliceDelta | undefined,
  middle: Snapshot,
  later: SliceDelta | undefined,
): SliceDelta | undefined {
  if (earlier === undefined || later === undefined || later.base !== middle) return undefined;
  const byKey = new Map<string, SliceChange>();
  for (const change of earlier.slices) byKey.set(sliceKey(change), change);
  for (const change of later.slices) {
    const key = sliceKey(change);
    const first = byKey.get(key);
    byKey.set(key, first ? { before: first.before, after: change.after } : change);
  }
  const slices = [...byKey.values()].filter((c) => c.before !== c.after);
  return { base: earlier.base, slices };
}

const sliceKey = (change: SliceChange): string =>
  objectKey((change.after ?? change.before) as NonNullable<SliceChange['after']>);
