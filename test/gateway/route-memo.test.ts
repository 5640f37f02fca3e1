import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import {
  DEFAULT_CONTROLLER_NAME,
  DEFAULT_SERVICE_IMPORT_KINDS,
  type TranslateOptions,
} from '../../src/gateway/options.ts';
import { TranslationMemo } from '../../src/gateway/route-memo.ts';
import { translate } from '../../src/gateway/translate.ts';
import type { AnyResource } from '../../src/snapshot/resources.ts';
import { Snapshot } from '../../src/snapshot/snapshot.ts';

/**
 * Issue 45: translate() with a memo gives what it gives without one, at every step of a run of edits, while an
 * edit of one route leaves every other route's outcome the very object it was. The inputs are the golden cases
 * (test/golden: every feature the translator has), edited at random: routes copied, changed, removed; other
 * objects changed and removed; options changed.
 */
const GOLDEN_DIR = fileURLToPath(new URL('../golden/', import.meta.url));
const OPTIONS: TranslateOptions = {
  controllerName: DEFAULT_CONTROLLER_NAME,
  identity: { cluster: 'east', zone: 'zone-a' },
  serviceImportKinds: DEFAULT_SERVICE_IMPORT_KINDS,
  gatewayAddresses: ['192.0.2.10'],
  eastWest: false,
};
const ROUTE_KINDS = new Set(['HTTPRoute', 'GRPCRoute']);

function readObjects(file: string): AnyResource[] {
  const objects: AnyResource[] = [];
  for (const doc of parseAllDocuments(readFileSync(file, 'utf8'))) {
    const value: unknown = doc.toJS();
    if (value !== null && value !== undefined) objects.push(value as AnyResource);
  }
  return objects;
}

function objectsOf(name: string): AnyResource[] {
  const byKey = new Map<string, AnyResource>();
  const key = (o: AnyResource) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
  for (const o of readObjects(`${GOLDEN_DIR}base.yaml`)) byKey.set(key(o), o);
  for (const o of readObjects(`${GOLDEN_DIR}${name}.in.yaml`)) byKey.set(key(o), o);
  return [...byKey.values()];
}

/** Park-Miller: the same edits on every run. */
function random(seed: number): (n: number) => number {
  let state = seed;
  return (n) => {
    state = (state * 48271) % 2147483647;
    return state % n;
  };
}

function allObjects(snapshot: Snapshot): AnyResource[] {
  return [...snapshot.kinds()].flatMap((kind) => [...snapshot.byKey(kind).values()]);
}

type Json = Record<string, unknown>;
const asJson = (value: unknown): Json | undefined =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : undefined;
const firstOf = (value: unknown): Json | undefined => (Array.isArray(value) ? asJson(value[0]) : undefined);

/** A copy of `object` with one change a user might make. */
function edited(object: AnyResource, pick: (n: number) => number): AnyResource {
  const copy = structuredClone(object) as unknown as Json;
  const spec = asJson(copy.spec);
  switch (pick(4)) {
    case 0:
      break; // the same content, a new object (a file read again)
    case 1:
      if (spec !== undefined && Array.isArray(spec.hostnames)) spec.hostnames = ['edited.example.com'];
      else copy.metadata = { ...asJson(copy.metadata), labels: { edited: 'yes' } };
      break;
    case 2: {
      const ref = firstOf(firstOf(spec?.rules)?.backendRefs);
      if (ref !== undefined) ref.port = 8081;
      const port = firstOf(spec?.ports);
      if (port !== undefined) port.port = 8081;
      break;
    }
    default: {
      const listener = firstOf(spec?.listeners);
      if (listener !== undefined) listener.hostname = '*.edited.example.com';
      else if (spec !== undefined) spec.parentRefs = [];
    }
  }
  return copy as unknown as AnyResource;
}

const cases = readdirSync(GOLDEN_DIR)
  .filter((f) => f.endsWith('.in.yaml'))
  .map((f) => f.slice(0, -'.in.yaml'.length))
  .sort();

describe('TranslationMemo', () => {
  it('has cases', () => expect(cases.length).toBeGreaterThan(10));

  for (const [index, name] of cases.entries()) {
    it(`${name}: a translation with the memo equals one without, through 20 random edits`, () => {
      const pick = random(index + 1);
      const memo = new TranslationMemo();
      let options: TranslateOptions = { ...OPTIONS, eastWest: name.startsWith('east-west-') };
      let snapshot = new Snapshot(objectsOf(name));
      expect(translate(snapshot, options, memo)).toEqual(translate(snapshot, options));
      for (let step = 0; step < 20; step++) {
        const objects = allObjects(snapshot);
        const routes = objects.filter((o) => ROUTE_KINDS.has(o.kind));
        const others = objects.filter((o) => !ROUTE_KINDS.has(o.kind));
        const choice = pick(10);
        if (choice < 5 && routes.length > 0) {
          const route = routes[pick(routes.length)] as AnyResource;
          snapshot = Snapshot.withChanges(snapshot, [edited(route, pick)], []);
        } else if (choice === 5 && routes.length > 0) {
          snapshot = Snapshot.withChanges(snapshot, [], [routes[pick(routes.length)] as AnyResource]);
        } else if (choice < 8 && others.length > 0) {
          snapshot = Snapshot.withChanges(
            snapshot,
            [edited(others[pick(others.length)] as AnyResource, pick)],
            [],
          );
        } else if (choice === 8 && others.length > 0) {
          snapshot = Snapshot.withChanges(snapshot, [], [others[pick(others.length)] as AnyResource]);
        } else {
          options = { ...options, identity: { ...options.identity, zone: `zone-${pick(3)}` } };
        }
        expect(translate(snapshot, options, memo), `step ${step}`).toEqual(translate(snapshot, options));
      }
    });
  }

  it('keeps every other route as the same objects when one route is edited, and none when a Service is', () => {
    const route = (i: number, host = `h${i}.example.com`) => `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: r-${i}, namespace: infra }
spec:
  parentRefs: [{ name: edge }]
  hostnames: [${host}]
  rules: [{ backendRefs: [{ name: echo-v1, port: 8080 }] }]
`;
    const gatewayYaml = `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: edge, namespace: infra }
spec:
  gatewayClassName: clusterset
  listeners: [{ name: http, port: 80, protocol: HTTP }]
`;
    const objects = (text: string) => parseAllDocuments(text).map((d) => d.toJS() as AnyResource);
    const base = readObjects(`${GOLDEN_DIR}base.yaml`);
    const memo = new TranslationMemo();
    const s0 = new Snapshot([
      ...base,
      ...objects([gatewayYaml, ...[0, 1, 2, 3, 4].map((i) => route(i))].join('---\n')),
    ]);
    const r0 = translate(s0, OPTIONS, memo);
    const statusOf = (result: typeof r0, name: string) =>
      result.statuses.find((s) => s.kind === 'HTTPRoute' && s.name === name);
    expect(statusOf(r0, 'r-1')).toBeDefined();
    expect(r0.table.ports.length).toBeGreaterThan(0);

    const s1 = Snapshot.withChanges(s0, objects(route(0, 'edited.example.com')), []);
    const r1 = translate(s1, OPTIONS, memo);
    expect(r1).toEqual(translate(s1, OPTIONS));
    expect(statusOf(r1, 'r-1')).toBe(statusOf(r0, 'r-1'));
    expect(statusOf(r1, 'r-0')).not.toBe(statusOf(r0, 'r-0'));

    const echo = base.find((o) => o.kind === 'Service' && o.metadata.name === 'echo-v1') as AnyResource;
    const s2 = Snapshot.withChanges(s1, [structuredClone(echo)], []);
    const r2 = translate(s2, OPTIONS, memo);
    expect(r2).toEqual(translate(s2, OPTIONS));
    expect(statusOf(r2, 'r-1')).not.toBe(statusOf(r1, 'r-1'));
  });
});
