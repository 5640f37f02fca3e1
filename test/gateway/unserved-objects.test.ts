import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { buildConfigDump } from '../../src/admin/config-dump.ts';
import {
  DEFAULT_CONTROLLER_NAME,
  DEFAULT_SERVICE_IMPORT_KINDS,
  type TranslateOptions,
} from '../../src/gateway/options.ts';
import { translate } from '../../src/gateway/translate.ts';
import type { AnyResource } from '../../src/snapshot/resources.ts';
import { Snapshot } from '../../src/snapshot/snapshot.ts';

const FIXTURE = fileURLToPath(new URL('./fixtures/unserved-objects.yaml', import.meta.url));

const OPTIONS: TranslateOptions = {
  controllerName: DEFAULT_CONTROLLER_NAME,
  identity: { cluster: 'east', zone: 'zone-a' },
  serviceImportKinds: DEFAULT_SERVICE_IMPORT_KINDS,
  gatewayAddresses: ['192.0.2.10'],
  eastWest: false,
};

function objects(): AnyResource[] {
  return parseAllDocuments(readFileSync(FIXTURE, 'utf8'))
    .map((doc) => doc.toJS() as AnyResource | null)
    .filter((o): o is AnyResource => o !== null);
}

function problemsOf(list: readonly AnyResource[]): string[] {
  const result = translate(new Snapshot(list), OPTIONS);
  return (buildConfigDump({ result, balancers: {}, problems: [] }) as { problems: string[] }).problems;
}

/**
 * Issue 42, "No silent configuration": every object of a first try that the gateway cannot act on is a problem
 * line of level warning in /config_dump, naming the object and why. The fixture is the YAML a user would apply.
 */
describe('objects the gateway cannot act on', () => {
  const problems = problemsOf(objects());

  it('names a parentRef to a Gateway that does not exist, with the Gateways that do', () => {
    expect(problems).toContain(
      'warning: HTTPRoute shop/typo: spec.parentRefs[0]: Gateway shop/egde not found (Gateways in shop: classless, edge, theirs); the route is not attached there',
    );
    expect(problems).toContain(
      'warning: TCPRoute shop/db: spec.parentRefs[0]: Gateway shop/egde not found (Gateways in shop: classless, edge, theirs); the route is not attached there',
    );
  });

  it('names a route whose only Gateway is another controller’s, and not a route served here as well', () => {
    expect(problems).toContain(
      'warning: HTTPRoute shop/elsewhere: no parent of this route is served by clusterset-gateway.io/gateway-controller: spec.parentRefs[0]: Gateway shop/theirs is of GatewayClass other (controller example.com/other-controller)',
    );
    expect(problems.filter((p) => p.includes('HTTPRoute shop/shared'))).toEqual([]);
    expect(problems).toContain(
      'warning: Gateway shop/classless: spec.gatewayClassName: GatewayClass clusterest not found; no controller serves this Gateway',
    );
  });

  it('names a backendRef to a missing Service and to a missing ServiceImport', () => {
    expect(problems).toContain(
      'warning: HTTPRoute shop/missing-backends: ResolvedRefs=False BackendNotFound: spec.rules[0].backendRefs[0]: Service shop/wbe not found; spec.rules[1].backendRefs[0]: ServiceImport shop/payments not found',
    );
  });

  it('names policies whose targets do not exist', () => {
    expect(problems).toContain(
      'warning: ClusterSelectionPolicy shop/pin-payments: Accepted=False TargetNotFound: no target exists: ServiceImport/shop/payments',
    );
    expect(problems).toContain(
      'warning: BackendTLSPolicy shop/web-tls: spec.targetRefs[0]: Service shop/wbe not found; the policy applies to no backend there',
    );
    expect(problems).toContain(
      'warning: XBackendTrafficPolicy shop/web-budget: spec.targetRefs[0]: Service shop/wbe not found; the policy applies to no backend there',
    );
  });

  it('names a ServiceImport without endpoints as a warning; its route stays accepted', () => {
    expect(problems).toContain(
      'warning: ServiceImport shop/cart: port 80 has no endpoints in any cluster; requests to it are answered 503 until a cluster exports ready ones',
    );
    const result = translate(new Snapshot(objects()), OPTIONS);
    const route = result.statuses.find((s) => s.kind === 'HTTPRoute' && s.name === 'imported');
    expect(JSON.stringify(route?.status)).not.toContain('"False"');
  });

  it('lists nothing else: every line is a warning about one of the mistakes above', () => {
    expect(problems).toHaveLength(9);
    expect(problems.every((p) => p.startsWith('warning: '))).toBe(true);
  });

  it('lists nothing once the mistakes are fixed', () => {
    const fixed = objects()
      .filter(
        (o) =>
          !['elsewhere', 'classless', 'pin-payments', 'web-tls', 'web-budget', 'db'].includes(
            o.metadata.name,
          ),
      )
      .map((o) => {
        const text = JSON.stringify(o)
          .replaceAll('"egde"', '"edge"')
          .replaceAll('"wbe"', '"web"')
          .replaceAll('"ServiceImport","name":"payments"', '"ServiceImport","name":"cart"');
        return JSON.parse(text) as AnyResource;
      });
    fixed.push({
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: {
        name: 'cart-west',
        namespace: 'shop',
        labels: {
          'multicluster.kubernetes.io/service-name': 'cart',
          'multicluster.kubernetes.io/source-cluster': 'west',
        },
      },
      addressType: 'IPv4',
      endpoints: [{ addresses: ['10.1.0.1'], zone: 'zone-b' }],
      ports: [{ name: 'http', port: 8080 }],
    } as unknown as AnyResource);
    expect(problemsOf(fixed)).toEqual([]);
  });
});
