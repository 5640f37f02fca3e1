import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import {
  DEFAULT_CONTROLLER_NAME,
  DEFAULT_SERVICE_IMPORT_KINDS,
  type TranslateOptions,
} from '../../src/gateway/options.ts';
import { mulberry32 } from '../../src/lb/seeded-random.ts';
import type { AnyResource, EndpointSlice } from '../../src/snapshot/resources.ts';
import { Snapshot } from '../../src/snapshot/snapshot.ts';

/**
 * Seeded random sequences of snapshot edits over the golden base objects: routes added, removed and edited
 * (hostnames, paths, filters, backends), a Service coming and going, endpoints moving, a Gateway listener added
 * and removed. Each snapshot is made from the last as a source would make it: untouched objects stay the same.
 */

export const EDIT_OPTIONS: TranslateOptions = {
  controllerName: DEFAULT_CONTROLLER_NAME,
  identity: { cluster: 'east', zone: 'zone-a' },
  serviceImportKinds: DEFAULT_SERVICE_IMPORT_KINDS,
  gatewayAddresses: ['192.0.2.10'],
  eastWest: true,
};

const BASE_FILE = fileURLToPath(new URL('../golden/base.yaml', import.meta.url));

/** mulberry32: the same sequence for the same seed, so a failing case repeats. */
export const seededRandom = mulberry32;

const HOSTNAMES = ['a.example', 'b.example', 'x.b.example', '*.b.example', 'c.example'];
const BACKENDS = ['echo-v1', 'echo-v2', 'echo-v3', 'missing'];

const key = (o: AnyResource): string => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;

function gateway(extraListener: boolean): AnyResource {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'Gateway',
    metadata: { name: 'gw', namespace: 'infra' },
    spec: {
      gatewayClassName: 'clusterset',
      listeners: [
        { name: 'http', port: 80, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'All' } } },
        ...(extraListener ? [{ name: 'alt', port: 8080, protocol: 'HTTP', hostname: '*.b.example' }] : []),
      ],
    },
  } as unknown as AnyResource;
}

function route(name: string, random: () => number): AnyResource {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const hostnames =
    random() < 0.2 ? [] : [...new Set([pick(HOSTNAMES), ...(random() < 0.3 ? [pick(HOSTNAMES)] : [])])];
  const rules = Array.from({ length: 1 + Math.floor(random() * 2) }, (_, r) => ({
    matches: [{ path: { type: random() < 0.7 ? 'PathPrefix' : 'Exact', value: `/${name}/${r}` } }],
    ...(random() < 0.3
      ? {
          filters: [
            {
              type: 'RequestHeaderModifier',
              requestHeaderModifier: { set: [{ name: 'x-gen', value: String(Math.floor(random() * 100)) }] },
            },
          ],
        }
      : {}),
    backendRefs: [{ name: pick(BACKENDS), namespace: 'infra', port: 8080 }],
  }));
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: { name, namespace: 'infra' },
    spec: { parentRefs: [{ name: 'gw' }], hostnames, rules },
  } as unknown as AnyResource;
}

/** `steps` snapshots, each one to three random edits after the one before. */
export function* randomSnapshots(seed: number, steps: number): Generator<Snapshot> {
  const random = seededRandom(seed);
  const base = parseAllDocuments(readFileSync(BASE_FILE, 'utf8'))
    .map((doc) => doc.toJS() as AnyResource | null)
    .filter((o): o is AnyResource => o !== null && o !== undefined);
  const world = new Map<string, AnyResource>();
  for (const o of base) world.set(key(o), o);
  const put = (o: AnyResource): void => {
    world.set(key(o), o);
  };
  let extraListener = false;
  put(gateway(extraListener));
  let nextRoute = 0;
  for (let i = 0; i < 8; i++) put(route(`r${nextRoute++}`, random));
  const removedService = new Map<string, AnyResource>();
  yield new Snapshot([...world.values()]);
  for (let step = 1; step < steps; step++) {
    const edits = 1 + Math.floor(random() * 3);
    for (let e = 0; e < edits; e++) {
      const routes = [...world.values()].filter((o) => o.kind === 'HTTPRoute');
      const roll = random();
      if (roll < 0.3 || routes.length === 0) put(route(`r${nextRoute++}`, random));
      else if (roll < 0.45) world.delete(key(routes[Math.floor(random() * routes.length)] as AnyResource));
      else if (roll < 0.75) {
        const old = routes[Math.floor(random() * routes.length)] as AnyResource;
        put(route(old.metadata.name, random));
      } else if (roll < 0.85) {
        const serviceKey = 'Service/infra/echo-v2';
        const service = world.get(serviceKey);
        if (service) {
          removedService.set(serviceKey, service);
          world.delete(serviceKey);
        } else put(removedService.get(serviceKey) as AnyResource);
      } else if (roll < 0.95) {
        const slices = [...world.values()].filter((o): o is EndpointSlice => o.kind === 'EndpointSlice');
        const slice = slices[Math.floor(random() * slices.length)] as EndpointSlice;
        put({
          ...slice,
          endpoints: [
            { addresses: [`10.9.${step}.${e + 1}`], conditions: { ready: random() < 0.8 }, zone: 'zone-a' },
          ],
        } as EndpointSlice);
      } else {
        extraListener = !extraListener;
        put(gateway(extraListener));
      }
    }
    yield new Snapshot([...world.values()]);
  }
}
