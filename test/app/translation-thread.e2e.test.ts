import { readdirSync, readFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { TranslationThread } from '../../src/app/translation-thread.ts';
import {
  DEFAULT_CONTROLLER_NAME,
  DEFAULT_SERVICE_IMPORT_KINDS,
  type TranslateOptions,
} from '../../src/gateway/options.ts';
import { translate } from '../../src/gateway/translate.ts';
import type { AnyResource, EndpointSlice, HTTPRoute } from '../../src/snapshot/resources.ts';
import { Snapshot } from '../../src/snapshot/snapshot.ts';
import { EDIT_OPTIONS, randomSnapshots } from '../controller/random-edits.ts';

const GOLDEN_DIR = fileURLToPath(new URL('../golden/', import.meta.url));
const OPTIONS: TranslateOptions = {
  controllerName: DEFAULT_CONTROLLER_NAME,
  identity: { cluster: 'east', zone: 'zone-a' },
  serviceImportKinds: DEFAULT_SERVICE_IMPORT_KINDS,
  gatewayAddresses: ['192.0.2.10'],
  eastWest: true,
};

function objects(file: string): AnyResource[] {
  return parseAllDocuments(readFileSync(file, 'utf8'))
    .map((doc) => doc.toJS() as AnyResource | null)
    .filter((o): o is AnyResource => o !== null && o !== undefined);
}

const key = (o: AnyResource) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
function world(file: string): AnyResource[] {
  const byKey = new Map<string, AnyResource>();
  for (const o of objects(`${GOLDEN_DIR}base.yaml`)) byKey.set(key(o), o);
  for (const o of objects(file)) byKey.set(key(o), o);
  return [...byKey.values()];
}

/** Equal as the serving thread reads them: JSON drops undefined properties on the way. */
const plain = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

// A tiny slice makes every translation's answer arrive in many pieces, parsed across turns of the event loop.
const thread = new TranslationThread({ sliceMs: 1, logger: pino({ level: 'silent' }) });
afterAll(() => thread.close());

describe('TranslationThread', () => {
  it('translates every golden case as translate() does on this thread, one snapshot after another', async () => {
    const cases = readdirSync(GOLDEN_DIR).filter((f) => f.endsWith('.in.yaml'));
    expect(cases.length).toBeGreaterThan(10);
    for (const file of cases) {
      const snapshot = new Snapshot(world(`${GOLDEN_DIR}${file}`));
      const remote = await thread.translate(snapshot, OPTIONS);
      expect(plain(remote), file).toEqual(plain(translate(snapshot, OPTIONS)));
    }
  }, 120_000);

  it('follows changes sent as differences: a route edited, an object removed, slices replaced alone', async () => {
    const base = world(`${GOLDEN_DIR}simple-same-namespace.in.yaml`);
    const first = new Snapshot(base);
    expect(plain(await thread.translate(first, OPTIONS))).toEqual(plain(translate(first, OPTIONS)));

    const route = base.find((o): o is HTTPRoute => o.kind === 'HTTPRoute');
    expect(route).toBeDefined();
    const edited = base.map((o) =>
      o === route ? { ...route, spec: { ...route.spec, hostnames: ['renamed.example'] } } : o,
    ) as AnyResource[];
    const second = new Snapshot(edited.filter((o) => o.kind !== 'ReferenceGrant'));
    const remote = await thread.translate(second, OPTIONS);
    expect(plain(remote)).toEqual(plain(translate(second, OPTIONS)));
    expect(JSON.stringify(remote.table)).toContain('renamed.example');

    const slice = second.list('EndpointSlice')[0] as EndpointSlice;
    expect(slice).toBeDefined();
    const moved: EndpointSlice = {
      ...slice,
      endpoints: [{ addresses: ['10.99.0.7'], conditions: { ready: true } }],
    };
    const third = Snapshot.withEndpointSlices(second, [{ before: slice, after: moved }]);
    const afterSlices = await thread.translate(third, OPTIONS);
    expect(plain(afterSlices)).toEqual(plain(translate(third, OPTIONS)));
    expect(JSON.stringify(afterSlices.table)).toContain('10.99.0.7');
  }, 60_000);

  it('answers random edit sequences with deltas that patch into what translate() returns here', async () => {
    for (const seed of [21, 22, 23]) {
      let previous: Awaited<ReturnType<typeof thread.translate>> | undefined;
      let shared = 0;
      for (const snapshot of randomSnapshots(seed, 15)) {
        const remote = await thread.translate(snapshot, EDIT_OPTIONS);
        expect(plain(remote), `seed ${seed}`).toEqual(plain(translate(snapshot, EDIT_OPTIONS)));
        // Parts the edit did not touch arrive as the objects of the result before.
        if (previous !== undefined && remote.table.backends !== previous.table.backends)
          for (const [id, backend] of Object.entries(remote.table.backends))
            if (backend === previous.table.backends[id]) shared++;
        previous = remote;
      }
      expect(shared, `seed ${seed}`).toBeGreaterThan(0);
    }
  }, 120_000);

  it('leaves the serving loop running while it translates and answers 2,000 routes', async () => {
    const many: AnyResource[] = [...world(`${GOLDEN_DIR}simple-same-namespace.in.yaml`)];
    const gateway = many.find((o) => o.kind === 'Gateway');
    expect(gateway).toBeDefined();
    for (let r = 0; r < 2_000; r++)
      many.push({
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'HTTPRoute',
        metadata: { name: `bulk-${r}`, namespace: gateway?.metadata.namespace ?? 'default' },
        spec: {
          parentRefs: [{ name: gateway?.metadata.name ?? '' }],
          hostnames: [`bulk-${r}.example`],
          rules: [{ matches: [{ path: { type: 'PathPrefix', value: `/b${r}` } }] }],
        },
      } as unknown as AnyResource);
    const snapshot = new Snapshot(many);
    let turns = 0;
    const ticker = setInterval(() => turns++, 0);
    const remote = await thread.translate(snapshot, OPTIONS);
    clearInterval(ticker);
    expect(plain(remote)).toEqual(plain(translate(snapshot, OPTIONS)));
    expect(turns).toBeGreaterThan(1);
  }, 60_000);

  it.skipIf(process.platform !== 'linux')(
    'runs its thread the given nice steps below the serving thread, and the same without them',
    async () => {
      const serving = getPriority();
      const below = new TranslationThread({ sliceMs: 1, nice: 5, logger: pino({ level: 'silent' }) });
      const snapshot = new Snapshot(world(`${GOLDEN_DIR}simple-same-namespace.in.yaml`));
      try {
        expect(threadsAtNice(serving + 5)).toBe(0);
        expect(plain(await below.translate(snapshot, OPTIONS))).toEqual(plain(translate(snapshot, OPTIONS)));
        expect(threadsAtNice(serving + 5)).toBe(1);
      } finally {
        await below.close();
      }
      expect(threadsAtNice(serving + 5)).toBe(0);
      const same = new TranslationThread({ sliceMs: 1, nice: 0, logger: pino({ level: 'silent' }) });
      try {
        await same.translate(snapshot, OPTIONS);
        expect(threadsBelow(serving)).toBe(0);
      } finally {
        await same.close();
      }
    },
    60_000,
  );
});

const threadsAtNice = (nice: number): number => niceValues().filter((n) => n === nice).length;
const threadsBelow = (nice: number): number => niceValues().filter((n) => n > nice).length;

/** The nice value of each of this process's threads (/proc/self/task/<id>/stat, field 19). */
function niceValues(): number[] {
  const values: number[] = [];
  for (const task of readdirSync('/proc/self/task')) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/self/task/${task}/stat`, 'utf8');
    } catch {
      continue; // the thread ended while listed
    }
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    values.push(Number(fields[16]));
  }
  return values;
}
