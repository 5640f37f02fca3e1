import { loadCrds } from '../../src/validation/crd-loader.ts';
import { CrdValidator } from '../../src/validation/index.ts';

/** The shipped CRDs, compiled strictly: a rule that cannot be evaluated fails the tests at load. */
export const validator = new CrdValidator(loadCrds(), { strict: true });

type Json = Record<string, unknown>;

const GW = 'gateway.networking.k8s.io';

export function object(kind: string, spec: Json, apiVersion = `${GW}/v1`): Json {
  return { apiVersion, kind, metadata: { name: 'x', namespace: 'default' }, spec };
}

export const base = {
  gateway: (): Json =>
    object('Gateway', { gatewayClassName: 'gc', listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }] }),
  httpRoute: (rule: Json = {}): Json =>
    object('HTTPRoute', {
      parentRefs: [{ name: 'gw' }],
      rules: [
        {
          matches: [{ path: { type: 'PathPrefix', value: '/' } }],
          backendRefs: [{ name: 'svc', port: 80 }],
          ...rule,
        },
      ],
    }),
  grpcRoute: (match: Json): Json =>
    object('GRPCRoute', {
      parentRefs: [{ name: 'gw' }],
      rules: [{ matches: [match], backendRefs: [{ name: 'svc', port: 50051 }] }],
    }),
  tlsRoute: (hostnames: string[]): Json =>
    object('TLSRoute', {
      parentRefs: [{ name: 'gw' }],
      hostnames,
      rules: [{ backendRefs: [{ name: 'svc', port: 443 }] }],
    }),
  backendTlsPolicy: (spec: Json = {}): Json =>
    object('BackendTLSPolicy', {
      targetRefs: [{ group: '', kind: 'Service', name: 'svc' }],
      validation: {
        caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'ca' }],
        hostname: 'svc.example.com',
      },
      ...spec,
    }),
  referenceGrant: (spec: Json = {}): Json =>
    object(
      'ReferenceGrant',
      {
        from: [{ group: GW, kind: 'HTTPRoute', namespace: 'apps' }],
        to: [{ group: '', kind: 'Service' }],
        ...spec,
      },
      `${GW}/v1beta1`,
    ),
};

/** The causes of a validation, as `field: message` lines (the way kubectl prints them). */
export function causes(obj: Json, old?: Json): string[] {
  return validator.validate(obj, old).errors.map((e) => `${e.field}: ${e.message}`);
}
