import { pino } from 'pino';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { Reconciler } from '../../src/controller/reconciler.ts';
import { statusSummary } from '../../src/controller/status-summary.ts';
import type { AnyResource } from '../../src/snapshot/resources.ts';
import { Snapshot } from '../../src/snapshot/snapshot.ts';
import { CONTROLLER, gateway, gatewayClass, httpRoute } from '../support/manifests.ts';

/** A reconciler whose log lines are pushed onto `lines`. */
function loggingReconciler(level: 'info' | 'debug', lines: string[]): Reconciler {
  return new Reconciler({
    translateOptions: () => ({
      controllerName: CONTROLLER,
      identity: {},
      serviceImportKinds: [{ group: 'multicluster.x-k8s.io', kind: 'ServiceImport' }],
      gatewayAddresses: ['127.0.0.1'],
      eastWest: false,
    }),
    logger: pino({ level }, { write: (line: string) => lines.push(line) }),
    registry: new Registry(),
    apply: async () => {},
  });
}

/** Issue 42: the "status changed" lines an operator reads at start-up are short; the whole status at debug. */
async function statusLines(level: 'info' | 'debug'): Promise<Record<string, unknown>[]> {
  const lines: string[] = [];
  const reconciler = loggingReconciler(level, lines);
  reconciler.submit(
    new Snapshot([
      gatewayClass() as AnyResource,
      gateway('edge', 'shop', [{ name: 'http', port: 80, protocol: 'HTTP' }]) as AnyResource,
      httpRoute('web', 'shop', {
        parentRefs: [{ name: 'edge' }],
        rules: [{ backendRefs: [{ name: 'missing', port: 80 }] }],
      }) as AnyResource,
    ]),
  );
  await reconciler.settled();
  return lines
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((line) => line.msg === 'status changed')
    .map((line) => ({ ...line, length: JSON.stringify(line).length }));
}

describe('status change log lines', () => {
  it('are short at info: conditions by type, reasons where they say something, long lists counted', async () => {
    const lines = await statusLines('info');
    const byObject = new Map(lines.map((line) => [line.object, line]));
    const gatewayClassLine = byObject.get('GatewayClass/csgw');
    expect(gatewayClassLine).toMatchObject({
      conditions: 'Accepted=True SupportedVersion=True',
      supportedFeatures: expect.any(Number),
    });
    expect(gatewayClassLine?.supportedFeatures).toBeGreaterThan(20);
    expect(gatewayClassLine).not.toHaveProperty('status');
    expect(byObject.get('Gateway/shop/edge')).toMatchObject({
      conditions: 'Accepted=True Programmed=True',
      addresses: '127.0.0.1',
      listeners: expect.stringMatching(
        /^http: Accepted=True Programmed=True ResolvedRefs=True .* attachedRoutes=1$/,
      ),
    });
    expect(byObject.get('HTTPRoute/shop/web')?.parents).toMatch(
      /^Gateway edge: Accepted=True ResolvedRefs=False \(BackendNotFound: .*missing.*\)$/,
    );
    for (const line of lines) expect(line.length, String(line.object)).toBeLessThan(400);
  });

  it('after an edit, name only the objects whose status changed', async () => {
    const lines: string[] = [];
    const reconciler = loggingReconciler('info', lines);
    const route = (name: string, backend: string) =>
      httpRoute(name, 'shop', {
        parentRefs: [{ name: 'edge' }],
        rules: [{ backendRefs: [{ name: backend, port: 80 }] }],
      }) as AnyResource;
    const fixed = [
      gatewayClass() as AnyResource,
      gateway('edge', 'shop', [{ name: 'http', port: 80, protocol: 'HTTP' }]) as AnyResource,
      ...['a', 'b', 'c', 'd'].map((name) => route(name, 'missing')),
    ];
    reconciler.submit(new Snapshot([...fixed, route('web', 'missing')]));
    await reconciler.settled();
    const changed = () =>
      lines
        .splice(0)
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .filter((line) => line.msg === 'status changed')
        .map((line) => line.object);
    expect(changed()).toContain('HTTPRoute/shop/a');
    reconciler.submit(new Snapshot([...fixed, route('web', 'other-missing')]));
    await reconciler.settled();
    expect(changed()).toEqual(['HTTPRoute/shop/web']);
    reconciler.submit(new Snapshot([...fixed, route('web', 'other-missing')]));
    await reconciler.settled();
    expect(changed()).toEqual([]);
  });

  it('carry the whole status at debug level', async () => {
    const lines = await statusLines('debug');
    const gatewayClassLine = lines.find((line) => line.object === 'GatewayClass/csgw');
    expect(gatewayClassLine?.status).toMatchObject({ supportedFeatures: expect.any(Array) });
    expect(gatewayClassLine?.length).toBeGreaterThan(1_000);
  });

  it('cut a long condition message, drop empty lists, name named items', () => {
    const summary = statusSummary({
      conditions: [{ type: 'Accepted', status: 'False', reason: 'Invalid', message: 'x'.repeat(500) }],
      clustersWithoutProperties: [],
      tiers: [
        { name: 'local', clusters: ['east-1'] },
        { name: 'region', clusters: ['east-2', 'east-3'] },
      ],
    });
    expect(summary.conditions).toBe(`Accepted=False (Invalid: ${'x'.repeat(160)}…)`);
    expect(summary).not.toHaveProperty('clustersWithoutProperties');
    expect(summary.tiers).toBe('local: east-1; region: east-2,east-3');
  });
});
