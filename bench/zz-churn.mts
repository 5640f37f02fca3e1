import { pino } from 'pino';
import { Registry } from 'prom-client';
import { startDataPlane } from '../src/app/data-plane.ts';
import { parseCli } from '../src/cli/args.ts';
import { Reconciler } from '../src/controller/reconciler.ts';
import type { AnyResource, EndpointSlice } from '../src/snapshot/resources.ts';
import { Snapshot } from '../src/snapshot/snapshot.ts';
const ROUTES=10000, PER_SERVICE=5, NS='bench';
const SLICE = Number(process.argv[2] ?? 5);
const ip = (n: number) => `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
function slice(service: number, firstIp: number, generation = 1): EndpointSlice {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name: `svc-${service}-1`,
      namespace: NS,
      generation,
      labels: { 'kubernetes.io/service-name': `svc-${service}` },
    },
    addressType: 'IPv4',
    ports: [{ name: 'http', protocol: 'TCP', port: 8080 }],
    endpoints: Array.from({ length: PER_SERVICE }, (_, i) => ({
      addresses: [ip(firstIp + i)],
      conditions: { ready: true },
      zone: `zone-${i % 3}`,
    })),
  };
}

function objects(backendPort: number, gatewayPort: number): AnyResource[] {
  const out: unknown[] = [
    {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'GatewayClass',
      metadata: { name: 'csgw', generation: 1 },
      spec: { controllerName: 'clusterset-gateway.io/gateway-controller' },
    },
    {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'Gateway',
      metadata: { name: 'edge', namespace: NS, generation: 1 },
      spec: { gatewayClassName: 'csgw', listeners: [{ name: 'http', protocol: 'HTTP', port: gatewayPort }] },
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'hot', namespace: NS },
      spec: { ports: [{ name: 'http', protocol: 'TCP', port: 80 }] },
    },
    {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: 'hot-1', namespace: NS, labels: { 'kubernetes.io/service-name': 'hot' } },
      addressType: 'IPv4',
      ports: [{ name: 'http', protocol: 'TCP', port: backendPort }],
      endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: true } }],
    },
    {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'HTTPRoute',
      metadata: { name: 'hot', namespace: NS, generation: 1 },
      spec: {
        parentRefs: [{ name: 'edge' }],
        hostnames: ['hot.example'],
        rules: [{ backendRefs: [{ name: 'hot', port: 80 }] }],
      },
    },
  ];
  for (let r = 0; r < ROUTES; r++) {
    out.push(
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: `svc-${r}`, namespace: NS },
        spec: { ports: [{ name: 'http', protocol: 'TCP', port: 80 }] },
      },
      slice(r, r * PER_SERVICE),
      {
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'HTTPRoute',
        metadata: { name: `route-${r}`, namespace: NS, generation: 1 },
        spec: {
          parentRefs: [{ name: 'edge' }],
          hostnames: [`app-${r}.example`],
          rules: [
            {
              matches: [{ path: { type: 'PathPrefix', value: `/r${r}` } }],
              backendRefs: [{ name: `svc-${r}`, port: 80 }],
            },
          ],
        },
      },
    );
  }
  return out as AnyResource[];
}


const cli = parseCli(['--address', '127.0.0.1', '--no-health-checks'], {});
const logger = pino({ level: 'silent' });
const registry = new Registry();
const dataPlane = startDataPlane(cli, undefined, logger, registry);
const reconciler = new Reconciler({
  translateOptions: () => ({ controllerName: cli.controllerName, identity: cli.identity, serviceImportKinds: [], gatewayAddresses: ['127.0.0.1'], eastWest: false }),
  translationSliceMs: SLICE, logger, registry,
  apply: async (r) => { await dataPlane.apply(r.table); },
  applyEndpoints: async (b, t) => { await dataPlane.applyEndpoints(b, t); },
});
const all = objects(1, 18999);
reconciler.submit(new Snapshot(all));
await reconciler.settled();
let current = new Snapshot(all);
reconciler.submit(current);
await reconciler.settled();
const sliceIdx = new Map<number, number>();
all.forEach((o, i) => { if (o.kind === 'EndpointSlice' && o.metadata.name.startsWith('svc-')) sliceIdx.set(Number(o.metadata.name.slice(4, o.metadata.name.lastIndexOf('-'))), i); });
let next = 2_000_000;
const t0 = performance.now();
const N = 2000;
for (let c = 0; c < N; c++) {
  const svc = Math.floor(Math.random() * ROUTES);
  const index = sliceIdx.get(svc) as number;
  const old = all[index] as EndpointSlice;
  const endpoints = [...(old.endpoints ?? [])];
  endpoints[c % endpoints.length] = { ...(endpoints[0] as NonNullable<EndpointSlice['endpoints']>[number]), addresses: [ip(next++)] };
  all[index] = { ...old, metadata: { ...old.metadata, generation: (old.metadata.generation ?? 1) + 1 }, endpoints };
  current = Snapshot.withEndpointSlices(current, [{ before: old, after: all[index] as EndpointSlice }]);
  reconciler.submit(current);
  await reconciler.settled();
}
console.log({ perChangeMs: (performance.now() - t0) / N });
await dataPlane.close(); process.exit(0);
