import { describe, expect, it } from 'vitest';
import { base, causes } from './fixtures.ts';

type Json = Record<string, unknown>;

interface RuleCase {
  readonly name: string;
  readonly valid: Json;
  readonly invalid: Json;
  /** Every cause the API server gives for the invalid object, as `field: message`. */
  readonly expected: readonly string[];
}

const inv = (type: string, message: string) => `Invalid value: "${type}": ${message}`;
const listener = (l: Json) => ({ name: 'l', port: 80, protocol: 'HTTP', ...l });
const gateway = (listeners: Json[], extra: Json = {}) => {
  const g = base.gateway();
  return { ...g, spec: { ...(g.spec as Json), listeners, ...extra } };
};
const tlsTerminate = { mode: 'Terminate', certificateRefs: [{ name: 'cert' }] };
const filterRule = (filters: Json[], rest: Json = {}) => base.httpRoute({ filters, ...rest });
const path = (type: string, value: string) => base.httpRoute({ matches: [{ path: { type, value } }] });
const rewrite = (p: Json) => ({ type: 'URLRewrite', urlRewrite: { path: p } });
const mirror = (m: Json) => ({
  type: 'RequestMirror',
  requestMirror: { backendRef: { name: 'm', port: 80 }, ...m },
});
const parents = (refs: Json[]) => {
  const r = base.httpRoute();
  return { ...r, spec: { ...(r.spec as Json), parentRefs: refs } };
};
const manyRules = (rules: number, matchesPerRule: number) => {
  const r = base.httpRoute();
  const matches = Array.from({ length: matchesPerRule }, (_, i) => ({
    path: { type: 'Exact', value: `/${i}` },
  }));
  const list = Array.from({ length: rules }, () => ({ matches, backendRefs: [{ name: 'svc', port: 80 }] }));
  return { ...r, spec: { ...(r.spec as Json), rules: list } };
};
const san = (s: Json) =>
  base.backendTlsPolicy({
    validation: {
      caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'ca' }],
      hostname: 'h.example.com',
      subjectAltNames: [s],
    },
  });

const CASES: readonly RuleCase[] = [
  {
    name: 'Gateway listeners: no tls for HTTP',
    valid: gateway([listener({ protocol: 'HTTPS', port: 443, tls: tlsTerminate })]),
    invalid: gateway([listener({ tls: tlsTerminate })]),
    expected: [
      `spec.listeners: ${inv('array', "tls must not be specified for protocols ['HTTP', 'TCP', 'UDP']")}`,
    ],
  },
  {
    name: 'Gateway listeners: no hostname for TCP',
    valid: gateway([listener({ protocol: 'TCP', port: 9000 })]),
    invalid: gateway([listener({ protocol: 'TCP', port: 9000, hostname: 'a.example.com' })]),
    expected: [
      `spec.listeners: ${inv('array', "hostname must not be specified for protocols ['TCP', 'UDP']")}`,
    ],
  },
  {
    name: 'Gateway listeners: tls mode Terminate for HTTPS',
    valid: gateway([listener({ protocol: 'HTTPS', port: 443, tls: tlsTerminate })]),
    invalid: gateway([listener({ protocol: 'HTTPS', port: 443, tls: { mode: 'Passthrough' } })]),
    expected: [`spec.listeners: ${inv('array', 'tls mode must be Terminate for protocol HTTPS')}`],
  },
  {
    name: 'Gateway listeners: port, protocol and hostname unique',
    valid: gateway([listener({ name: 'a' }), listener({ name: 'b', hostname: 'b.example.com' })]),
    invalid: gateway([listener({ name: 'a' }), listener({ name: 'b' })]),
    expected: [
      `spec.listeners: ${inv('array', 'Combination of port, protocol and hostname must be unique for each listener')}`,
    ],
  },
  {
    name: 'Gateway listener tls: certificateRefs for Terminate',
    valid: gateway([listener({ protocol: 'HTTPS', port: 443, tls: tlsTerminate })]),
    invalid: gateway([
      listener({
        protocol: 'HTTPS',
        port: 443,
        tls: { mode: 'Terminate', certificateRefs: [], options: {} },
      }),
    ]),
    expected: [
      `spec.listeners[0].tls: ${inv('object', 'certificateRefs or options must be specified when mode is Terminate')}`,
    ],
  },
  {
    name: 'Gateway addresses: IPAddress values unique',
    valid: gateway([listener({})], { addresses: [{ value: '10.0.0.1' }, { value: '10.0.0.2' }] }),
    invalid: gateway([listener({})], { addresses: [{ value: '10.0.0.1' }, { value: '10.0.0.1' }] }),
    expected: [`spec.addresses: ${inv('array', 'IPAddress values must be unique')}`],
  },
  {
    name: 'HTTPRoute parentRefs: sectionName when the same parent twice',
    valid: parents([
      { name: 'gw', sectionName: 'a' },
      { name: 'gw', sectionName: 'b' },
    ]),
    invalid: parents([{ name: 'gw', sectionName: 'a' }, { name: 'gw' }]),
    expected: [
      `spec.parentRefs: ${inv('array', 'sectionName must be specified when parentRefs includes 2 or more references to the same parent')}`,
    ],
  },
  {
    name: 'HTTPRoute parentRefs: sectionName unique (namespace is __namespace__ in CEL)',
    valid: parents([
      { name: 'gw', namespace: 'a', sectionName: 'x' },
      { name: 'gw', namespace: 'b', sectionName: 'x' },
    ]),
    invalid: parents([
      { name: 'gw', namespace: 'a', sectionName: 'x' },
      { name: 'gw', namespace: 'a', sectionName: 'x' },
    ]),
    expected: [
      `spec.parentRefs: ${inv('array', 'sectionName must be unique when parentRefs includes 2 or more references to the same parent')}`,
    ],
  },
  {
    name: 'HTTPRoute filter: requestHeaderModifier required for its type',
    valid: filterRule([
      { type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'a', value: 'b' }] } },
    ]),
    invalid: filterRule([{ type: 'RequestHeaderModifier' }]),
    expected: [
      `spec.rules[0].filters[0]: ${inv('object', 'filter.requestHeaderModifier must be specified for RequestHeaderModifier filter.type')}`,
    ],
  },
  {
    name: 'HTTPRoute filter: requestRedirect only for its type',
    valid: filterRule([{ type: 'RequestRedirect', requestRedirect: { statusCode: 301 } }], {
      backendRefs: [],
    }),
    invalid: filterRule(
      [
        {
          type: 'RequestHeaderModifier',
          requestHeaderModifier: { set: [{ name: 'a', value: 'b' }] },
          requestRedirect: {},
        },
      ],
      { backendRefs: [] },
    ),
    expected: [
      `spec.rules[0].filters[0]: ${inv('object', 'filter.requestRedirect must be nil if the filter.type is not RequestRedirect')}`,
    ],
  },
  {
    name: 'HTTPRoute filters: RequestHeaderModifier not repeated',
    valid: filterRule([
      { type: 'RequestHeaderModifier', requestHeaderModifier: { add: [{ name: 'a', value: 'b' }] } },
    ]),
    invalid: filterRule([
      { type: 'RequestHeaderModifier', requestHeaderModifier: { add: [{ name: 'a', value: 'b' }] } },
      { type: 'RequestHeaderModifier', requestHeaderModifier: { add: [{ name: 'c', value: 'd' }] } },
    ]),
    expected: [`spec.rules[0].filters: ${inv('array', 'RequestHeaderModifier filter cannot be repeated')}`],
  },
  {
    name: 'HTTPRoute filters: not both RequestRedirect and URLRewrite',
    valid: filterRule([rewrite({ type: 'ReplaceFullPath', replaceFullPath: '/x' })]),
    invalid: filterRule(
      [
        { type: 'RequestRedirect', requestRedirect: { statusCode: 302 } },
        { type: 'URLRewrite', urlRewrite: {} },
      ],
      {
        backendRefs: [],
      },
    ),
    expected: [
      `spec.rules[0].filters: ${inv('array', 'May specify either httpRouteFilterRequestRedirect or httpRouteFilterRequestRewrite, but not both')}`,
    ],
  },
  {
    name: 'HTTPRoute rule: RequestRedirect not with backendRefs',
    valid: filterRule([{ type: 'RequestRedirect', requestRedirect: { statusCode: 301 } }], {
      backendRefs: [],
    }),
    invalid: filterRule([{ type: 'RequestRedirect', requestRedirect: { statusCode: 301 } }]),
    expected: [
      `spec.rules[0]: ${inv('object', 'RequestRedirect filter must not be used together with backendRefs')}`,
    ],
  },
  {
    name: 'HTTPRoute rule: replacePrefixMatch needs exactly one PathPrefix match (has() on an index)',
    valid: filterRule([rewrite({ type: 'ReplacePrefixMatch', replacePrefixMatch: '/v2' })]),
    invalid: filterRule([rewrite({ type: 'ReplacePrefixMatch', replacePrefixMatch: '/v2' })], {
      matches: [{ path: { type: 'Exact', value: '/v1' } }],
    }),
    expected: [
      `spec.rules[0]: ${inv('object', 'When using URLRewrite filter with path.replacePrefixMatch, exactly one PathPrefix match must be specified')}`,
    ],
  },
  {
    name: 'HTTPRoute path modifier: replaceFullPath for its type',
    valid: filterRule([rewrite({ type: 'ReplaceFullPath', replaceFullPath: '/x' })]),
    invalid: filterRule([rewrite({ type: 'ReplaceFullPath' })]),
    expected: [
      `spec.rules[0].filters[0].urlRewrite.path: ${inv('object', "replaceFullPath must be specified when type is set to 'ReplaceFullPath'")}`,
    ],
  },
  {
    name: 'HTTPRoute match: path starts with /',
    valid: path('Exact', '/a'),
    invalid: path('Exact', 'a'),
    expected: [
      `spec.rules[0].matches[0].path: ${inv('object', "value must be an absolute path and start with '/' when type one of ['Exact', 'PathPrefix']")}`,
    ],
  },
  {
    name: 'HTTPRoute match: no // in a path',
    valid: path('PathPrefix', '/a/b'),
    invalid: path('PathPrefix', '/a//b'),
    expected: [
      `spec.rules[0].matches[0].path: ${inv('object', "must not contain '//' when type one of ['Exact', 'PathPrefix']")}`,
    ],
  },
  {
    name: 'HTTPRoute match: path characters (RE2 matches)',
    valid: path('PathPrefix', '/a%20b'),
    invalid: path('PathPrefix', '/a b'),
    expected: [
      `spec.rules[0].matches[0].path: ${inv('object', "must only contain valid characters (matching ^(?:[-A-Za-z0-9/._~!$&'()*+,;=:@]|[%][0-9a-fA-F]{2})+$) for types ['Exact', 'PathPrefix']")}`,
    ],
  },
  {
    name: 'HTTPRoute rules: at most 128 matches in all',
    valid: manyRules(16, 8),
    invalid: manyRules(16, 9),
    expected: [
      `spec.rules: ${inv('array', 'While 16 rules and 64 matches per rule are allowed, the total number of matches across all rules in a route must be less than 128')}`,
    ],
  },
  {
    name: 'HTTPRoute backendRef: Service needs a port',
    valid: base.httpRoute({ backendRefs: [{ name: 'svc', port: 80 }] }),
    invalid: base.httpRoute({ backendRefs: [{ name: 'svc' }] }),
    expected: [`spec.rules[0].backendRefs[0]: ${inv('object', 'Must have port for Service reference')}`],
  },
  {
    name: 'HTTPRoute timeouts: backendRequest within request (duration())',
    valid: base.httpRoute({ timeouts: { request: '10s', backendRequest: '5s' } }),
    invalid: base.httpRoute({ timeouts: { request: '10s', backendRequest: '1m' } }),
    expected: [
      `spec.rules[0].timeouts: ${inv('object', 'backendRequest timeout cannot be longer than request timeout')}`,
    ],
  },
  {
    name: 'HTTPRoute requestMirror: percent or fraction',
    valid: filterRule([mirror({ percent: 10 })]),
    invalid: filterRule([mirror({ percent: 10, fraction: { numerator: 1, denominator: 10 } })]),
    expected: [
      `spec.rules[0].filters[0].requestMirror: ${inv('object', 'Only one of percent or fraction may be specified in HTTPRequestMirrorFilter')}`,
    ],
  },
  {
    name: 'HTTPRoute requestMirror fraction: numerator <= denominator (int comparison)',
    valid: filterRule([mirror({ fraction: { numerator: 10, denominator: 10 } })]),
    invalid: filterRule([mirror({ fraction: { numerator: 11, denominator: 10 } })]),
    expected: [
      `spec.rules[0].filters[0].requestMirror.fraction: ${inv('object', 'numerator must be less than or equal to denominator')}`,
    ],
  },
  {
    name: 'HTTPRoute CORS: * alone in allowMethods',
    valid: filterRule([{ type: 'CORS', cors: { allowMethods: ['*'] } }]),
    invalid: filterRule([{ type: 'CORS', cors: { allowMethods: ['*', 'GET'] } }]),
    expected: [
      `spec.rules[0].filters[0].cors.allowMethods: ${inv('array', "AllowMethods cannot contain '*' alongside other methods")}`,
    ],
  },
  {
    name: 'GRPCRoute method match: service or method',
    valid: base.grpcRoute({ method: { type: 'Exact', service: 'foo.Bar' } }),
    invalid: base.grpcRoute({ method: { type: 'Exact' } }),
    expected: [
      `spec.rules[0].matches[0].method: ${inv('object', "One or both of 'service' or 'method' must be specified")}`,
    ],
  },
  {
    name: 'GRPCRoute method match: service characters ((?i) RE2 flag)',
    valid: base.grpcRoute({ method: { service: 'Foo.BAR_baz' } }),
    invalid: base.grpcRoute({ method: { service: 'foo-bar' } }),
    expected: [
      `spec.rules[0].matches[0].method: ${inv('object', 'service must only contain valid characters (matching ^(?i)\\.?[a-z_][a-z_0-9]*(\\.[a-z_][a-z_0-9]*)*$)')}`,
    ],
  },
  {
    name: 'TLSRoute hostnames: no IP (isIP)',
    valid: base.tlsRoute(['a.example.com']),
    invalid: base.tlsRoute(['10.1.2.3']),
    expected: [`spec.hostnames: ${inv('array', 'Hostnames cannot contain an IP')}`],
  },
  {
    name: 'BackendTLSPolicy validation: CA refs or well-known CAs',
    valid: base.backendTlsPolicy(),
    invalid: base.backendTlsPolicy({ validation: { hostname: 'svc.example.com' } }),
    expected: [
      `spec.validation: ${inv('object', 'must specify either CACertificateRefs or WellKnownCACertificates')}`,
    ],
  },
  {
    name: 'BackendTLSPolicy validation: not both CA refs and well-known CAs',
    valid: base.backendTlsPolicy({
      validation: { wellKnownCACertificates: 'System', hostname: 'svc.example.com' },
    }),
    invalid: base.backendTlsPolicy({
      validation: {
        caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'ca' }],
        wellKnownCACertificates: 'System',
        hostname: 'svc.example.com',
      },
    }),
    expected: [
      `spec.validation: ${inv('object', 'must not contain both CACertificateRefs and WellKnownCACertificates')}`,
    ],
  },
  {
    name: 'BackendTLSPolicy subjectAltNames: Hostname type needs hostname',
    valid: san({ type: 'Hostname', hostname: 'a.example.com' }),
    invalid: san({ type: 'Hostname', uri: 'spiffe://a' }),
    expected: [
      `spec.validation.subjectAltNames[0]: ${inv('object', 'SubjectAltName element must contain Hostname, if Type is set to Hostname')}`,
      `spec.validation.subjectAltNames[0]: ${inv('object', 'SubjectAltName element must not contain URI, if Type is not set to URI')}`,
    ],
  },
  {
    name: 'BackendTLSPolicy targetRefs: sectionName when the same target twice',
    valid: base.backendTlsPolicy({
      targetRefs: [
        { group: '', kind: 'Service', name: 'svc', sectionName: 'a' },
        { group: '', kind: 'Service', name: 'svc', sectionName: 'b' },
      ],
    }),
    invalid: base.backendTlsPolicy({
      targetRefs: [
        { group: '', kind: 'Service', name: 'svc', sectionName: 'a' },
        { group: '', kind: 'Service', name: 'svc' },
      ],
    }),
    expected: [
      `spec.targetRefs: ${inv('array', 'sectionName must be specified when targetRefs includes 2 or more references to the same target')}`,
    ],
  },
];

describe('Gateway API CEL rules, as kube-apiserver evaluates them', () => {
  it('covers at least 20 rules', () => {
    expect(CASES.length).toBeGreaterThanOrEqual(20);
  });
  for (const c of CASES) {
    it(c.name, () => {
      expect(causes(c.valid)).toEqual([]);
      expect(causes(c.invalid)).toEqual(c.expected);
    });
  }
});
