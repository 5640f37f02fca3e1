import { pino } from 'pino';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { Reconciler } from '../../src/controller/reconciler.ts';
import { translate } from '../../src/gateway/translate.ts';
import type { RouteTable } from '../../src/ir/route-table.ts';
import { runInSlices, type SliceClock, type Steps } from '../../src/ir/steps.ts';
import type { AnyResource } from '../../src/snapshot/resources.ts';
import { Snapshot } from '../../src/snapshot/snapshot.ts';
import { CONTROLLER, gateway, gatewayClass, httpRoute, service, serviceSlice } from '../support/manifests.ts';

/** Pure but CPU-bound: seconds on a machine whose cores are busy, so more than the unit project's 5 s. */
const CPU_BOUND_TIMEOUT_MS = 30_000;

/** A clock that moves 1 ms each time it is read, and counts the pauses it was asked for. */
function fakeClock(): SliceClock & { pauses: number } {
  let now = 0;
  const clock = {
    pauses: 0,
    now: () => now++,
    pause: async () => {
      clock.pauses++;
    },
  };
  return clock;
}

function* countTo(n: number): Steps<number> {
  for (let i = 0; i < n; i++) yield;
  return n;
}

describe('runInSlices', () => {
  it('pauses whenever a slice is used up, and returns what the steps return', async () => {
    const clock = fakeClock();
    // Each step reads the clock once (1 ms): a 4 ms slice is 4 steps, so 20 steps pause 5 times.
    await expect(runInSlices(countTo(20), 4, clock)).resolves.toBe(20);
    expect(clock.pauses).toBe(5);
  });

  it('runs every step at once with a slice of 0', async () => {
    const clock = fakeClock();
    await expect(runInSlices(countTo(1000), 0, clock)).resolves.toBe(1000);
    expect(clock.pauses).toBe(0);
  });

  it('carries an error thrown by a step to the caller', async () => {
    function* failing(): Steps<number> {
      yield;
      throw new Error('bad route');
    }
    await expect(runInSlices(failing(), 1, fakeClock())).rejects.toThrow('bad route');
  });
});

describe('a translation in slices', () => {
  const objects = (routes: number, hostnamePrefix = 'app'): AnyResource[] =>
    [
      gatewayClass(),
      gateway('edge', 'shop', [{ name: 'http', protocol: 'HTTP', port: 80 }]),
      ...Array.from({ length: routes }, (_, i) => [
        service(`svc-${i}`, 'shop'),
        serviceSlice(`svc-${i}-1`, `svc-${i}`, 'shop', { port: 8080, zone: 'a' }),
        httpRoute(`route-${i}`, 'shop', {
          parentRefs: [{ name: 'edge' }],
          hostnames: [`${hostnamePrefix}-${i}.example`, '*.example'],
          rules: [{ backendRefs: [{ name: `svc-${i}`, port: 80 }] }],
        }),
      ]).flat(),
    ] as AnyResource[];
  const options = {
    controllerName: CONTROLLER,
    identity: {},
    serviceImportKinds: [],
    gatewayAddresses: ['127.0.0.1'],
    eastWest: false,
  };

  it(
    'lets the event loop run between slices and applies the same table as a translation in one go',
    async () => {
      const clock = fakeClock();
      const applied: RouteTable[] = [];
      const reconciler = new Reconciler({
        translateOptions: () => options,
        logger: pino({ level: 'silent' }),
        registry: new Registry(),
        translationSliceMs: 5,
        sliceClock: clock,
        apply: async (result) => {
          applied.push(result.table);
        },
        applyEndpoints: async () => {},
      });
      const first = new Snapshot(objects(200));
      reconciler.submit(first);
      await reconciler.settled();
      expect(clock.pauses).toBeGreaterThan(20);
      expect(applied).toEqual([translate(first, options).table]);

      // A route change: translated and compared with the table in force in slices too.
      const pausesBefore = clock.pauses;
      const second = new Snapshot(objects(200, 'renamed'));
      reconciler.submit(second);
      await reconciler.settled();
      expect(clock.pauses - pausesBefore).toBeGreaterThan(20);
      expect(applied.at(-1)).toEqual(translate(second, options).table);
      expect(applied.at(-1)?.ports[0]?.listeners[0]?.virtualHosts.map((v) => v.hostname)).toContain(
        'renamed-7.example',
      );
    },
    CPU_BOUND_TIMEOUT_MS,
  );
});
