import type { ServerResponse } from 'node:http';
import { ApiFailure, badRequest } from './api-status.ts';
import type { Route } from './request-route.ts';
import { groupVersion } from './resources.ts';
import type { ObjectStore } from './store.ts';
import { watchFilter } from './verbs.ts';
import type { Watcher } from './watch-events.ts';

/**
 * A watch as kube-apiserver streams it: chunked JSON events from now (or replayed from a resourceVersion, an
 * expired one answered with an ERROR event on the open stream), bookmarks when asked for, `timeoutSeconds`.
 */

export interface ActiveWatch extends Watcher {
  readonly res: ServerResponse;
  readonly bookmarks: boolean;
  readonly apiVersion: string;
  close(): void;
}

export function openWatch(
  store: ObjectStore,
  watches: Set<ActiveWatch>,
  route: Route,
  url: URL,
  res: ServerResponse,
): void {
  const { def } = route;
  const gv = groupVersion(def.group, route.version);
  const filter = watchFilter(route, url);
  const rvParam = url.searchParams.get('resourceVersion') ?? '';
  let fromRv: number | undefined;
  if (rvParam !== '' && rvParam !== '0') {
    if (!/^\d+$/.test(rvParam)) throw badRequest(`invalid resource version: ${rvParam}`);
    fromRv = Number(rvParam);
  }
  res.writeHead(200, {
    'Content-Type': 'application/json',
    'Transfer-Encoding': 'chunked',
    'Cache-Control': 'no-cache, private',
  });
  res.flushHeaders();
  let closed = false;
  const watch: ActiveWatch = {
    def,
    filter,
    res,
    apiVersion: gv,
    bookmarks: url.searchParams.get('allowWatchBookmarks') === 'true',
    send: (type, object) => {
      if (closed) return;
      const obj = type === 'ERROR' ? object : { ...object, apiVersion: gv, kind: def.kind };
      res.write(`${JSON.stringify({ type, object: obj })}\n`);
    },
    close: () => {
      if (closed) return;
      closed = true;
      store.removeWatcher(watch);
      watches.delete(watch);
      clearTimeout(timer);
      res.end();
    },
  };
  const timeoutSeconds = Number(url.searchParams.get('timeoutSeconds') ?? '0');
  const timer = timeoutSeconds > 0 ? setTimeout(() => watch.close(), timeoutSeconds * 1000) : undefined;
  res.on('close', () => watch.close());
  if (fromRv === undefined) {
    for (const obj of store.list(def, filter)) watch.send('ADDED', obj);
  } else {
    try {
      store.replay(watch, fromRv);
    } catch (err) {
      if (!(err instanceof ApiFailure)) throw err;
      // The watch cache reports an expired resourceVersion as an ERROR event on an open stream.
      watch.send('ERROR', err.toStatus());
      watch.close();
      return;
    }
  }
  store.addWatcher(watch);
  watches.add(watch);
}
