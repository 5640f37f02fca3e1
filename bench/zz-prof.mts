import { pino } from 'pino';
import { Registry } from 'prom-client';
import { startDataPlane } from '../src/app/data-plane.ts';
import { parseCli } from '../src/cli/args.ts';
import { translate } from '../src/gateway/translate.ts';
import type { AnyResource, EndpointSlice } from '../src/snapshot/resources.ts';
import { Snapshot } from '../src/snapshot/snapshot.ts';
const ROUTES=10000, PER_SERVICE=5, NS='bench';
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
const dataPlane = startDataPlane(cli, undefined, logger, new Registry());
const opts = { controllerName: cli.controllerName, identity: cli.identity, serviceImportKinds: [], gatewayAddresses: ['127.0.0.1'], eastWest: false };
const all = objects(1, 18999);
for (let round = 0; round < 3; round++) {
  let t = performance.now();
  const snap = new Snapshot(all);
  const tSnap = performance.now() - t; t = performance.now();
  const result = translate(snap, opts as never);
  if (round === 2) (globalThis as any).__p = 1;
  const tTr = performance.now() - t; t = performance.now();
  await dataPlane.apply(result.table);
  const tApply = performance.now() - t;
  console.log({ tSnap, tTr, tApply });
}


{
  const { serialize, deserialize } = await import('node:v8');
  const { isDeepStrictEqual } = await import('node:util');
  const snap = new Snapshot(all);
  const r1 = translate(snap, opts as never);
  const r2 = translate(new Snapshot(all), opts as never);
  for (let i = 0; i < 3; i++) {
    let t = performance.now();
    const buf = serialize(r1);
    const tSer = performance.now() - t; t = performance.now();
    const back = deserialize(buf);
    const tDe = performance.now() - t; t = performance.now();
    const eqRoutes = isDeepStrictEqual(r1.table.ports, r2.table.ports);
    const tEqPorts = performance.now() - t; t = performance.now();
    const eqB = isDeepStrictEqual(r1.table.backends, r2.table.backends);
    const tEqB = performance.now() - t;
    const tS = performance.now(); const sAll = serialize(all); const tSerAll = performance.now() - tS;
    console.log({ bytes: buf.length, tSer, tDe, tEqPorts, tEqB, eqRoutes, eqB, back: !!back, allBytes: sAll.length, tSerAll });
  }
}
await dataPlane.close(); process.exit(0);
