import { describe, expect, it } from 'vitest';
import type { UpstreamEndpoint } from '../../src/ir/route-table.ts';
import { resolveServiceImportBackend } from '../../src/mcs/backends.ts';
import type {
  AnyResource,
  EndpointSliceObjects,
  ServiceImport,
  ServiceImportSpec,
} from '../../src/snapshot/resources.ts';
import { Snapshot } from '../../src/snapshot/snapshot.ts';
import { ep, mcsSlice, serviceImport } from './fixtures.ts';

/** KEP-1645 `status.endpointSliceObjects`: Absent is the ClusterSetIP as one endpoint, Present the slices. */
const IDENTITY = { cluster: 'east', region: 'us-east' };

function webImport(spec: ServiceImportSpec, endpointSliceObjects?: EndpointSliceObjects): ServiceImport {
  const base = serviceImport('shop', 'web', {
    type: 'ClusterSetIP',
    ports: [{ name: 'http', port: 80 }],
    ...spec,
  });
  return endpointSliceObjects ? { ...base, status: { endpointSliceObjects } } : base;
}
const westSlice = mcsSlice('shop', 'web-west', 'web', 'west', [ep('10.2.0.1')]);

function resolve(...objects: AnyResource[]) {
  const res = resolveServiceImportBackend(new Snapshot(objects), 'shop', 'web', 80, IDENTITY);
  if (!res.ok) throw new Error(res.message);
  return res;
}
const flat = (tiers: readonly (readonly UpstreamEndpoint[])[]) => tiers.flat();

describe('ServiceImport status.endpointSliceObjects', () => {
  it('Absent: the ClusterSetIP on the import port is the one endpoint, in this cluster; slices are not read', () => {
    const res = resolve(webImport({ ips: ['242.0.0.7'] }, 'Absent'), westSlice);
    expect(flat(res.backend.tiers)).toEqual([
      {
        key: '242.0.0.7:80',
        address: '242.0.0.7',
        port: 80,
        cluster: 'east',
        region: 'us-east',
        ready: true,
        weight: 1,
      },
    ]);
    expect(res.backend.endpointSliceObjects).toBe('Absent');
    expect(res.warnings).toEqual([
      {
        code: 'ServedThroughClusterSetIP',
        owner: 'ServiceImport/shop/web',
        message:
          'ServiceImport shop/web: status.endpointSliceObjects is Absent: port 80 is served through its ClusterSetIP 242.0.0.7 as one endpoint; the MCS implementation balances across clusters behind it, so per-cluster locality and cluster selection do not apply',
      },
    ]);
  });

  it('Absent with dual-stack ips: the first IP address, an IPv6 one bracketed in its key', () => {
    const res = resolve(webImport({ ips: ['not-an-ip', 'fd00::7', '242.0.0.7'] }, 'Absent'));
    expect(flat(res.backend.tiers).map((e) => e.key)).toEqual(['[fd00::7]:80']);
  });

  it.each([
    ['no ips', {}, 'spec.ips is empty'],
    ['ips without an IP address', { ips: ['vip.example'] }, 'spec.ips (vip.example) holds no IP address'],
  ])('Absent with %s: no endpoints (503) and one line saying why, never an error', (_case, spec, why) => {
    const res = resolve(webImport(spec, 'Absent'), westSlice);
    expect(res.backend.tiers).toEqual([]);
    expect(res.warnings?.map((w) => [w.code, w.message])).toEqual([
      [
        'ClusterSetIPMissing',
        `ServiceImport shop/web: status.endpointSliceObjects is Absent and ${why}: port 80 has no endpoints; its requests are answered 503 until the import has a ClusterSetIP or its MCS implementation publishes EndpointSlices`,
      ],
    ]);
  });

  it('Present reads the slices and leaves the ClusterSetIP alone, as an import without the field does', () => {
    const present = resolve(webImport({ ips: ['242.0.0.7'] }, 'Present'), westSlice);
    const unset = resolve(webImport({ ips: ['242.0.0.7'] }), westSlice);
    expect(flat(present.backend.tiers).map((e) => `${e.cluster} ${e.key}`)).toEqual(['west 10.2.0.1:8080']);
    expect(present.backend.endpointSliceObjects).toBe('Present');
    expect(present.warnings).toEqual([]);
    const { endpointSliceObjects: _, ...presentRest } = present.backend;
    expect(unset.backend).toEqual(presentRest);
    expect(unset.backend).not.toHaveProperty('endpointSliceObjects');
  });
});
