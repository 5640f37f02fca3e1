import { describe, expect, it } from 'vitest';
import { packTexts, unpackTexts } from '../../src/app/packed-texts.ts';
import { encodeResultDelta, ResultPatch, shareUnchanged } from '../../src/controller/result-delta.ts';
import { type TranslationResult, translate } from '../../src/gateway/translate.ts';
import type { VirtualHost } from '../../src/ir/route-table.ts';
import { runAllSteps } from '../../src/ir/steps.ts';
import type { HTTPRoute } from '../../src/snapshot/resources.ts';
import { Snapshot } from '../../src/snapshot/snapshot.ts';
import { EDIT_OPTIONS, randomSnapshots } from './random-edits.ts';

/** Equal as JSON: the delta, as JSON, drops undefined properties. */
const plain = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

/** One delta from the encoder's memory to a result, through the packed buffer the thread transfers. */
function delta(sent: TranslationResult | undefined, result: TranslationResult) {
  const pieces = runAllSteps(encodeResultDelta(sent, result));
  const patch = new ResultPatch();
  for (const piece of unpackTexts(packTexts(pieces))) patch.add(piece);
  return { patch, sent: result, pieces };
}

function virtualHosts(result: TranslationResult): Map<string, VirtualHost> {
  const out = new Map<string, VirtualHost>();
  for (const port of result.table.ports)
    for (const listener of port.listeners)
      for (const host of listener.virtualHosts) out.set(`${port.port} ${listener.id} ${host.hostname}`, host);
  return out;
}

describe('result deltas', () => {
  it('patch the last result into one equal to translating from scratch, over random edit sequences', () => {
    let steps = 0;
    let kept = 0;
    let changed = 0;
    for (const seed of [1, 2, 3, 4]) {
      let sent: TranslationResult | undefined;
      let base: TranslationResult | undefined;
      for (const snapshot of randomSnapshots(seed, 20)) {
        const fresh = translate(snapshot, EDIT_OPTIONS);
        const next = delta(sent, fresh);
        const patched = runAllSteps(next.patch.applyTo(base));
        expect(plain(patched), `seed ${seed} step ${steps}`).toEqual(plain(fresh));
        // What was not touched is the very object the serving thread had.
        if (base !== undefined) {
          const before = virtualHosts(base);
          for (const [where, host] of virtualHosts(patched)) {
            const was = before.get(where);
            if (was === undefined) continue;
            if (JSON.stringify(was) === JSON.stringify(host)) {
              expect(host).toBe(was);
              kept++;
            } else changed++;
          }
        }
        sent = next.sent;
        base = patched;
        steps++;
      }
    }
    expect(steps).toBe(80);
    // The sequences both edit virtual hosts and leave some alone.
    expect(kept).toBeGreaterThan(50);
    expect(changed).toBeGreaterThan(10);
  }, 30_000);

  it('sends only what changed: one route edited is a piece or two, nothing changed is none', () => {
    const [snapshot] = [...randomSnapshots(7, 1)] as [Snapshot];
    const first = translate(snapshot, EDIT_OPTIONS);
    const full = delta(undefined, first);
    const base = runAllSteps(full.patch.applyTo(undefined));
    const again = delta(full.sent, translate(snapshot, EDIT_OPTIONS));
    expect(again.pieces).toEqual([]);
    expect(runAllSteps(again.patch.applyTo(base))).toBe(base);

    const route = snapshot.list('HTTPRoute')[0] as HTTPRoute;
    const rule = route.spec?.rules?.[0];
    const edited: HTTPRoute = {
      ...route,
      spec: {
        ...route.spec,
        rules: [{ ...rule, matches: [{ path: { type: 'PathPrefix', value: '/edited' } }] }],
      },
    };
    const objects = [...snapshot.kinds()]
      .flatMap((kind) => snapshot.list(kind))
      .map((o) => (o === route ? edited : o));
    const next = delta(full.sent, translate(new Snapshot(objects), EDIT_OPTIONS));
    expect(next.pieces.length).toBeGreaterThan(0);
    expect(next.pieces.join('')).toContain('/edited');
    expect(next.pieces.join('').length).toBeLessThan(full.pieces.join('').length / 4);
  });

  it('refuses a delta laid over another base than it was made against', () => {
    const [a, b] = [...randomSnapshots(8, 2)].map((s) => translate(s, EDIT_OPTIONS));
    const fromA = delta(a as TranslationResult, b as TranslationResult);
    // Against nothing, a delta that only reorders or edits names items that are not there.
    expect(fromA.pieces.length).toBeGreaterThan(0);
    expect(() => runAllSteps(fromA.patch.applyTo(undefined))).toThrow();
    expect(() => new ResultPatch().add('{"not":"a piece"}')).toThrow();
  });
});

describe('shareUnchanged', () => {
  it('equals the new result and keeps every unchanged part as the old object', () => {
    for (const seed of [11, 12, 13]) {
      let last: TranslationResult | undefined;
      for (const snapshot of randomSnapshots(seed, 20)) {
        const fresh = translate(snapshot, EDIT_OPTIONS);
        if (last === undefined) {
          last = fresh;
          continue;
        }
        const shared = runAllSteps(shareUnchanged(last, fresh));
        expect(plain(shared)).toEqual(plain(fresh));
        const before = virtualHosts(last);
        for (const [where, host] of virtualHosts(shared)) {
          const was = before.get(where);
          if (was !== undefined && JSON.stringify(was) === JSON.stringify(host)) expect(host).toBe(was);
        }
        last = shared;
      }
    }
    const [snapshot] = [...randomSnapshots(14, 1)];
    const once = translate(snapshot as never, EDIT_OPTIONS);
    expect(runAllSteps(shareUnchanged(once, translate(snapshot as never, EDIT_OPTIONS)))).toBe(once);
  }, 30_000);
});
