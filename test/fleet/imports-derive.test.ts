import { describe, expect, it } from 'vitest';
import { deriveImports, type ExportStatus } from '../../src/fleet/derive-imports.ts';
import { combine, conditionsToWrite } from '../../src/fleet/fleet-source.ts';
import type { AnyResource, EndpointSlice, ServiceImport } from '../../src/snapshot/resources.ts';
import { exportOf, memberView, serviceOf, sliceOf } from './member-fixtures.ts';

const noLocal = () => false;
const OLD = '2026-01-01T00:00:00Z';
const NEW = '2026-06-01T00:00:00Z';

const importsOf = (objects: readonly AnyResource[]) =>
  objects.filter((o): o is ServiceImport => o.kind === 'ServiceImport');
const slicesOf = (objects: readonly AnyResource[]) =>
  objects.filter((o): o is EndpointSlice => o.kind === 'EndpointSlice');
const conditionOf = (statuses: readonly ExportStatus[], cluster: string, type: string) =>
  statuses.find((s) => s.cluster === cluster)?.conditions.find((c) => c.type === type);

/** `web` in namespace `shop`, exported by a cluster, with one slice of the given endpoints. */
function webMember(
  cluster: string,
  createdAt: string,
  ips: readonly string[],
  service = serviceOf('shop', 'web'),
  extra: Parameters<typeof memberView>[1] = {},
) {
  return memberView(cluster, {
    exports: [exportOf('shop', 'web', createdAt)],
    services: [service],
    slices: [
      sliceOf(
        'shop',
        'web',
        'web-abc12',
        ips.map((ip) => ({ ip, port: 8080, zone: `${cluster}-a`, node: `${cluster}-node-1` })),
      ),
    ],
    ...extra,
  });
}

describe('derived ServiceImports (KEP-1645)', () => {
  it('namespace sameness: shop/web exported by two clusters is one ServiceImport with both clusters’ slices', () => {
    const east = webMember('east-1', OLD, ['10.1.0.1', '10.1.0.2']);
    const west = webMember('west-1', NEW, ['10.2.0.1']);
    const other = memberView('west-1', {
      ...west,
      exports: [...west.serviceExports, exportOf('blog', 'web', OLD)],
      services: [...west.services, serviceOf('blog', 'web')],
      slices: [...west.endpointSlices, sliceOf('blog', 'web', 'web-zz', [{ ip: '10.2.9.9', port: 8080 }])],
    });
    const d = deriveImports([east, other], noLocal);

    expect(importsOf(d.objects).map((i) => `${i.metadata.namespace}/${i.metadata.name}`)).toEqual([
      'blog/web',
      'shop/web',
    ]);
    const shop = d.imports.find((i) => i.namespace === 'shop');
    expect(shop).toMatchObject({
      clusters: ['east-1', 'west-1'],
      endpoints: 3,
      specFrom: 'members',
      endpointSliceObjects: 'Present',
    });
    const shopImport = importsOf(d.objects).find((i) => i.metadata.namespace === 'shop');
    expect(shopImport?.spec).toEqual({
      type: 'ClusterSetIP',
      ports: [{ name: 'http', protocol: 'TCP', port: 80 }],
      sessionAffinity: 'None',
    });
    // KEP-1645: the fleet publishes the members' slices, and says so as an MCS implementation does.
    expect(shopImport?.status).toEqual({ endpointSliceObjects: 'Present' });

    const slices = slicesOf(d.objects).filter((s) => s.metadata.namespace === 'shop');
    expect(slices.map((s) => s.metadata.name)).toEqual(['east-1.web-abc12', 'west-1.web-abc12']);
    const eastSlice = slices[0] as EndpointSlice;
    expect(eastSlice.metadata.labels).toEqual({
      'multicluster.kubernetes.io/service-name': 'web',
      'multicluster.kubernetes.io/source-cluster': 'east-1',
      'endpointslice.kubernetes.io/managed-by': 'clusterset-gateway-fleet',
    });
    // Zone, node, hints, conditions and ports survive the relabelling.
    expect(eastSlice.endpoints?.[0]).toEqual({
      addresses: ['10.1.0.1'],
      conditions: { ready: true, serving: true, terminating: false },
      zone: 'east-1-a',
      hints: { forZones: [{ name: 'east-1-a' }] },
      nodeName: 'east-1-node-1',
    });
    expect(eastSlice.ports).toEqual([{ name: 'http', protocol: 'TCP', port: 8080 }]);
  });

  it('imports only exported Services; an export without a Service, or of an ExternalName, is not Valid', () => {
    const member = memberView('east-1', {
      exports: [exportOf('shop', 'ghost', OLD), exportOf('shop', 'ext', OLD), exportOf('shop', 'web', OLD)],
      services: [
        serviceOf('shop', 'web'),
        serviceOf('shop', 'private'),
        serviceOf('shop', 'ext', { type: 'ExternalName' }),
      ],
      slices: [
        sliceOf('shop', 'web', 'web-1', [{ ip: '10.1.0.1', port: 8080 }]),
        sliceOf('shop', 'private', 'private-1', [{ ip: '10.1.0.9', port: 8080 }]),
      ],
    });
    const d = deriveImports([member], noLocal);
    expect(importsOf(d.objects).map((i) => i.metadata.name)).toEqual(['web']);
    expect(slicesOf(d.objects).map((s) => s.metadata.name)).toEqual(['east-1.web-1']);
    const byName = (name: string) => d.exports.find((s) => s.name === name)?.conditions;
    expect(byName('ghost')).toEqual([
      expect.objectContaining({ type: 'Valid', status: 'False', reason: 'NoService' }),
      expect.objectContaining({ type: 'Ready', status: 'False', reason: 'Failed' }),
    ]);
    expect(byName('ext')?.[0]).toMatchObject({
      type: 'Valid',
      status: 'False',
      reason: 'InvalidServiceType',
    });
    expect(byName('web')).toEqual([
      expect.objectContaining({ type: 'Valid', status: 'True', reason: 'Valid' }),
      expect.objectContaining({ type: 'Ready', status: 'True', reason: 'Exported' }),
      expect.objectContaining({ type: 'Conflict', status: 'False', reason: 'NoConflicts' }),
    ]);
    expect(d.exports.find((s) => s.name === 'web')?.generation).toBe(1);
  });

  it.each([
    {
      conflict: 'PortConflict',
      younger: serviceOf('shop', 'web', { ports: [{ name: 'http', protocol: 'TCP', port: 8080 }] }),
      expectedSpec: { ports: [{ name: 'http', protocol: 'TCP', port: 80 }] },
    },
    {
      conflict: 'TypeConflict',
      younger: serviceOf('shop', 'web', { headless: true }),
      expectedSpec: { type: 'ClusterSetIP' },
    },
    {
      conflict: 'SessionAffinityConflict',
      younger: serviceOf('shop', 'web', { sessionAffinity: 'ClientIP' }),
      expectedSpec: { sessionAffinity: 'None' },
    },
    {
      conflict: 'TrafficDistributionConflict',
      younger: serviceOf('shop', 'web', { trafficDistribution: 'PreferSameZone' }),
      expectedSpec: {},
    },
  ])('$conflict: the oldest export wins, both exports carry the Conflict condition', (c) => {
    // The younger cluster sorts first by name: age, not name, decides.
    const oldest = webMember('zulu', OLD, ['10.1.0.1']);
    const younger = webMember('alpha', NEW, ['10.2.0.1'], c.younger);
    const d = deriveImports([younger, oldest], noLocal);
    const spec = importsOf(d.objects)[0]?.spec;
    expect(spec).toMatchObject(c.expectedSpec);
    expect(spec?.trafficDistribution).toBeUndefined();
    expect(d.imports[0]).toMatchObject({
      oldestExport: 'zulu',
      clusters: ['zulu', 'alpha'],
      conflicts: [{ cluster: 'alpha', reasons: [c.conflict] }],
    });
    expect(conditionOf(d.exports, 'alpha', 'Conflict')).toMatchObject({ status: 'True', reason: c.conflict });
    expect(conditionOf(d.exports, 'alpha', 'Conflict')?.message).toContain(
      'the oldest export (cluster zulu) wins',
    );
    expect(conditionOf(d.exports, 'zulu', 'Conflict')).toMatchObject({ status: 'True', reason: c.conflict });
    // A conflict does not cost the younger cluster its endpoints.
    expect(d.imports[0]?.endpoints).toBe(2);
  });

  it('ports are the union by name; several conflicts combine their reasons with commas; equal ages go by cluster name', () => {
    const a = webMember(
      'a',
      OLD,
      ['10.1.0.1'],
      serviceOf('shop', 'web', { ports: [{ name: 'http', port: 80 }] }),
    );
    const b = webMember(
      'b',
      OLD,
      ['10.2.0.1'],
      serviceOf('shop', 'web', {
        headless: true,
        ports: [
          { name: 'http', port: 80, protocol: 'TCP', appProtocol: 'kubernetes.io/h2c' },
          { name: 'metrics', port: 9090 },
        ],
      }),
    );
    const d = deriveImports([b, a], noLocal);
    expect(importsOf(d.objects)[0]?.spec?.ports).toEqual([
      { name: 'http', protocol: 'TCP', port: 80 },
      { name: 'metrics', protocol: 'TCP', port: 9090 },
    ]);
    expect(conditionOf(d.exports, 'b', 'Conflict')?.reason).toBe('PortConflict,TypeConflict');
    expect(conditionOf(d.exports, 'a', 'Conflict')?.reason).toBe('PortConflict,TypeConflict');
  });

  it('a local ServiceImport of the same name keeps its spec; members’ endpoints join it and replace its slices of the same cluster', () => {
    const east = webMember('east-1', OLD, ['10.1.0.1']);
    const d = deriveImports([east], (ns, name) => ns === 'shop' && name === 'web');
    expect(importsOf(d.objects)).toEqual([]);
    expect(d.imports[0]?.specFrom).toBe('local ServiceImport');

    const local: AnyResource[] = [
      {
        apiVersion: 'multicluster.x-k8s.io/v1alpha1',
        kind: 'ServiceImport',
        metadata: { name: 'web', namespace: 'shop' },
        spec: { type: 'ClusterSetIP', ports: [{ name: 'http', protocol: 'TCP', port: 80 }] },
      },
      mcsSlice('copied-east', 'east-1', '10.9.0.1'),
      mcsSlice('copied-south', 'south-1', '10.9.0.2'),
    ];
    const snapshot = combine(local, d);
    expect(snapshot.get('ServiceImport', 'shop', 'web')).toBe(local[0]);
    expect(
      snapshot
        .slicesForServiceImport('shop', 'web')
        .map((s) => s.metadata.name)
        .sort(),
    ).toEqual(['copied-south', 'east-1.web-abc12']);
  });

  it('a stale member keeps its last endpoints; a connecting one replaces nothing; a refused one contributes nothing', () => {
    const stale = webMember('east-1', OLD, ['10.1.0.1'], undefined, {
      state: 'stale',
      reason: 'connect ECONNREFUSED',
    });
    const connecting = memberView('south-1', { state: 'connecting' });
    const refused = webMember('west-1', OLD, ['10.2.0.1'], undefined, {
      state: 'refused',
      reason: 'name claimed',
    });
    const d = deriveImports([stale, connecting, refused], noLocal);
    expect(d.imports[0]).toMatchObject({ clusters: ['east-1'], endpoints: 1 });
    expect([...d.authoritativeClusters]).toEqual(['east-1']);
    const snapshot = combine([mcsSlice('copied-south', 'south-1', '10.9.0.2')], d);
    expect(snapshot.slicesForServiceImport('shop', 'web').map((s) => s.metadata.name)).toEqual([
      'copied-south',
      'east-1.web-abc12',
    ]);
  });

  it('members’ properties reach locality: region on their slices, every property on a ClusterProfile', () => {
    const east = webMember('east-1', OLD, ['10.1.0.1'], undefined, {
      properties: { 'topology.kubernetes.io/region': 'us-east', jurisdiction: 'us' },
    });
    const d = deriveImports([east], noLocal);
    expect(slicesOf(d.objects)[0]?.metadata.labels?.['topology.kubernetes.io/region']).toBe('us-east');
    const profile = d.objects.find((o) => o.kind === 'ClusterProfile');
    expect(profile).toMatchObject({
      metadata: { name: 'east-1' },
      status: {
        properties: [
          { name: 'cluster.clusterset.k8s.io', value: 'east-1' },
          { name: 'topology.kubernetes.io/region', value: 'us-east' },
          { name: 'jurisdiction', value: 'us' },
        ],
      },
    });
  });

  it('a change in one member re-derives only that member: the other members’ slice objects are reused', () => {
    const east = webMember('east-1', OLD, ['10.1.0.1']);
    const west = webMember('west-1', NEW, ['10.2.0.1']);
    const first = deriveImports([east, west], noLocal);
    const westMoved = webMember('west-1', NEW, ['10.2.0.7']);
    const second = deriveImports([east, westMoved], noLocal);
    const byName = (objects: readonly AnyResource[], name: string) =>
      slicesOf(objects).find((s) => s.metadata.name === name);
    expect(byName(second.objects, 'east-1.web-abc12')).toBe(byName(first.objects, 'east-1.web-abc12'));
    expect(byName(second.objects, 'west-1.web-abc12')?.endpoints?.[0]?.addresses).toEqual(['10.2.0.7']);
  });
});

describe('--write-export-status: what is written', () => {
  const status: ExportStatus = {
    cluster: 'east-1',
    namespace: 'shop',
    name: 'web',
    generation: 2,
    conditions: [
      { type: 'Valid', status: 'True', reason: 'Valid', message: 'ok' },
      { type: 'Conflict', status: 'False', reason: 'NoConflicts', message: 'none' },
    ],
  };
  const withStatus = (conditions: unknown[]) => ({ ...exportOf('shop', 'web', OLD), status: { conditions } });

  it('keeps other controllers’ conditions, stamps new ones, and writes nothing when the member already agrees', () => {
    const foreign = {
      type: 'Synced',
      status: 'True',
      reason: 'Other',
      message: '',
      lastTransitionTime: 'T0',
    };
    const first = conditionsToWrite(withStatus([foreign]), status, 'T1');
    expect(first).toEqual([
      foreign,
      {
        type: 'Valid',
        status: 'True',
        reason: 'Valid',
        message: 'ok',
        observedGeneration: 2,
        lastTransitionTime: 'T1',
      },
      {
        type: 'Conflict',
        status: 'False',
        reason: 'NoConflicts',
        message: 'none',
        observedGeneration: 2,
        lastTransitionTime: 'T1',
      },
    ]);
    expect(conditionsToWrite(withStatus(first as unknown[]), status, 'T2')).toBeUndefined();
  });

  it('moves lastTransitionTime only when a condition’s status changes', () => {
    const before = [
      {
        type: 'Valid',
        status: 'True',
        reason: 'Valid',
        message: 'old words',
        observedGeneration: 2,
        lastTransitionTime: 'T0',
      },
      {
        type: 'Conflict',
        status: 'True',
        reason: 'PortConflict',
        message: 'x',
        observedGeneration: 2,
        lastTransitionTime: 'T0',
      },
    ];
    const next = conditionsToWrite(withStatus(before), status, 'T5');
    expect(next?.map((c) => `${c.type}:${c.lastTransitionTime}`)).toEqual(['Valid:T0', 'Conflict:T5']);
  });
});

describe('hostile members: one bad object costs only itself', () => {
  it('endpoints without a valid address, beyond 1,000 per slice, malformed ports or lists are left out and listed', () => {
    const good = sliceOf('shop', 'web', 'web-good', [{ ip: '10.1.0.1', port: 8080 }]);
    const mixed = {
      ...sliceOf('shop', 'web', 'web-mixed', [{ ip: '10.1.0.2', port: 8080 }]),
      endpoints: [
        { addresses: ['10.1.0.2'] },
        { addresses: ['999.1.1.1'] },
        { addresses: 'garbage' },
        { addresses: ['fe80::1'] },
        null,
      ],
      ports: [
        { name: 'http', port: 8080 },
        { name: 'bad', port: 'eighty' },
      ],
    } as unknown as EndpointSlice;
    const huge = sliceOf(
      'shop',
      'web',
      'web-huge',
      Array.from({ length: 1200 }, (_, i) => ({
        ip: `10.3.${Math.floor(i / 250)}.${(i % 250) + 1}`,
        port: 8080,
      })),
    );
    const notLists = {
      ...good,
      metadata: { ...good.metadata, name: 'web-notlists' },
      endpoints: 'x',
    } as unknown as EndpointSlice;
    const badService = { ...serviceOf('shop', 'web'), spec: { ports: 'eighty' } } as unknown as ReturnType<
      typeof serviceOf
    >;
    const east = memberView('east-1', {
      exports: [exportOf('shop', 'web', OLD)],
      services: [serviceOf('shop', 'web')],
      slices: [good, mixed, huge, notLists],
    });
    const west = memberView('west-1', {
      exports: [exportOf('shop', 'web', NEW)],
      services: [badService],
    });
    const d = deriveImports([east, west], noLocal);
    const byName = new Map(slicesOf(d.objects).map((s) => [s.metadata.name, s]));
    expect([...byName.keys()]).toEqual(['east-1.web-good', 'east-1.web-huge', 'east-1.web-mixed']);
    expect(byName.get('east-1.web-mixed')?.endpoints).toEqual([{ addresses: ['10.1.0.2'] }]);
    expect(byName.get('east-1.web-mixed')?.ports).toEqual([{ name: 'http', port: 8080 }]);
    expect(byName.get('east-1.web-huge')?.endpoints).toHaveLength(1000);
    expect(d.problems).toEqual([
      'cluster east-1: EndpointSlice shop/web-huge: 200 endpoint(s) beyond 1000 per slice left out',
      'cluster east-1: EndpointSlice shop/web-mixed: 4 endpoint(s) without a valid IPv4 address left out; 1 malformed port(s) left out',
      'cluster east-1: EndpointSlice shop/web-notlists: endpoints and ports must be lists; slice ignored',
    ]);
    // The Service with malformed ports still exports (no ports of its own); the import keeps east-1's.
    expect(importsOf(d.objects)[0]?.spec?.ports).toEqual([{ name: 'http', protocol: 'TCP', port: 80 }]);
  });
});

function mcsSlice(name: string, cluster: string, ip: string): EndpointSlice {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name,
      namespace: 'shop',
      labels: {
        'multicluster.kubernetes.io/service-name': 'web',
        'multicluster.kubernetes.io/source-cluster': cluster,
      },
    },
    addressType: 'IPv4',
    ports: [{ name: 'http', port: 8080 }],
    endpoints: [{ addresses: [ip] }],
  };
}
