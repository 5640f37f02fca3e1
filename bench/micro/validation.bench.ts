/**
 * CRD validation speed (issue 12): schema + CEL validation of 10,000 HTTPRoutes, each with two parentRefs,
 * two hostnames, two rules (path + header matches, a header filter, two weighted backendRefs). Target: under
 * 1 s for the 10,000. Also the one-time cost of loading and compiling the CRDs. Reported, never asserted.
 *
 *   node --import tsx --expose-gc bench/micro/validation.bench.ts
 */
import { loadCrds } from '../../src/validation/crd-loader.ts';
import { CrdValidator } from '../../src/validation/index.ts';

function route(i: number): Record<string, unknown> {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: { name: `route-${i}`, namespace: `ns-${i % 100}` },
    spec: {
      parentRefs: [{ name: 'gw' }, { name: 'gw', namespace: 'infra', sectionName: 'https' }],
      hostnames: [`r${i}.example.com`, `*.r${i}.example.net`],
      rules: [
        {
          matches: [
            { path: { type: 'PathPrefix', value: `/api/${i}` } },
            { path: { type: 'Exact', value: '/health' }, headers: [{ name: 'x-env', value: 'prod' }] },
          ],
          filters: [
            {
              type: 'RequestHeaderModifier',
              requestHeaderModifier: { set: [{ name: 'x-r', value: `${i}` }] },
            },
          ],
          backendRefs: [
            { name: `svc-${i}`, port: 8080, weight: 90 },
            { name: `svc-${i}-canary`, port: 8080, weight: 10 },
          ],
        },
        { backendRefs: [{ name: 'fallback', port: 80 }] },
      ],
    },
  };
}

let start = performance.now();
const crds = loadCrds();
const loadMs = performance.now() - start;
start = performance.now();
const validator = new CrdValidator(crds, { strict: true });
const compileMs = performance.now() - start;
const routes = Array.from({ length: 10_000 }, (_, i) => route(i));

for (const r of routes.slice(0, 500)) validator.validate(r); // warm-up
// Wall time and this process's CPU time: on a shared machine the CPU time is what an idle core would take.
const runs: { wall: number; cpu: number }[] = [];
let invalid = 0;
for (let run = 0; run < 5; run++) {
  start = performance.now();
  const cpu = process.cpuUsage();
  for (const r of routes) if (validator.validate(r).errors.length > 0) invalid++;
  const used = process.cpuUsage(cpu);
  runs.push({ wall: performance.now() - start, cpu: (used.user + used.system) / 1000 });
}
const median = (values: number[]) => values.sort((a, b) => a - b)[2]?.toFixed(0);
process.stdout.write(
  `load CRDs ${loadMs.toFixed(0)} ms, compile ${compileMs.toFixed(0)} ms\n` +
    `validate 10,000 HTTPRoutes: median wall ${median(runs.map((r) => r.wall))} ms, ` +
    `CPU ${median(runs.map((r) => r.cpu))} ms (of 5 runs), invalid ${invalid}\n`,
);
