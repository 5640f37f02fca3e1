import { isRecord } from '../../snapshot/json-object.ts';
import type { JsonObject } from './json.ts';
import { clone } from './json.ts';
import type { ResourceDef } from './resources.ts';
import { type FieldRequirement, type LabelRequirement, matchesFields, matchesLabels } from './selectors.ts';

/** What the store's watches are and see: their filter, and each change as the watch's selector shows it. */

export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface HistoryEntry {
  readonly rv: number;
  readonly def: ResourceDef;
  readonly type: EventType;
  readonly object: JsonObject;
  readonly old: JsonObject | undefined;
}

export interface WatchFilter {
  readonly namespace: string | undefined;
  readonly labels: readonly LabelRequirement[];
  readonly fields: readonly FieldRequirement[];
}

export interface Watcher {
  readonly def: ResourceDef;
  readonly filter: WatchFilter;
  send(type: EventType | 'BOOKMARK' | 'ERROR', object: JsonObject): void;
}

export function matchesFilter(obj: JsonObject, filter: WatchFilter): boolean {
  const meta = isRecord(obj.metadata) ? obj.metadata : {};
  if (filter.namespace !== undefined && meta.namespace !== filter.namespace) return false;
  return matchesLabels(obj, filter.labels) && matchesFields(obj, filter.fields);
}

/** A watch sees an object leave its selector as DELETED and enter it as ADDED, as kube-apiserver's cacher does. */
export function deliver(watcher: Watcher, entry: HistoryEntry): void {
  const now = matchesFilter(entry.object, watcher.filter);
  if (entry.type === 'MODIFIED') {
    const before = entry.old ? matchesFilter(entry.old, watcher.filter) : false;
    if (now && before) watcher.send('MODIFIED', clone(entry.object));
    else if (now) watcher.send('ADDED', clone(entry.object));
    else if (before) watcher.send('DELETED', clone(entry.object));
    return;
  }
  if (now) watcher.send(entry.type, clone(entry.object));
}
