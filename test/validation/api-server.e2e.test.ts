import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type KubeApiServer, startKubeApiServer } from '../support/kube-api-server/index.ts';

let server: KubeApiServer;
beforeEach(async () => {
  server = await startKubeApiServer();
});
afterEach(async () => {
  await server.stop();
});

const ROUTES = '/apis/gateway.networking.k8s.io/v1/namespaces/default/httproutes';
const GATEWAYS = '/apis/gateway.networking.k8s.io/v1/namespaces/default/gateways';

async function send(
  method: string,
  path: string,
  body: unknown,
  contentType = 'application/json',
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: 'Bearer test-token', 'content-type': contentType },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const route = (name: string, rule: Record<string, unknown>) => ({
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'HTTPRoute',
  metadata: { name },
  spec: { parentRefs: [{ name: 'gw' }], rules: [{ backendRefs: [{ name: 'svc', port: 80 }], ...rule }] },
});

describe('the API test server validates custom resources with their CRDs', () => {
  it('rejects a CEL rule violation with 422, reason Invalid and the rule message in causes', async () => {
    const res = await send('POST', ROUTES, route('r', { backendRefs: [{ name: 'svc' }] }));
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message:
        'HTTPRoute.gateway.networking.k8s.io "r" is invalid: spec.rules[0].backendRefs[0]: Invalid value: "object": Must have port for Service reference',
      reason: 'Invalid',
      details: {
        name: 'r',
        group: 'gateway.networking.k8s.io',
        kind: 'HTTPRoute',
        causes: [
          {
            reason: 'FieldValueInvalid',
            message: 'Invalid value: "object": Must have port for Service reference',
            field: 'spec.rules[0].backendRefs[0]',
          },
        ],
      },
      code: 422,
    });
  });

  it('rejects a mistyped field with the type error and the skipped-rules cause', async () => {
    const res = await send('POST', ROUTES, route('r', { backendRefs: 'x' }));
    expect(res.status).toBe(422);
    const details = res.body.details as { causes: { reason: string; field: string }[] };
    expect(details.causes.map((c) => `${c.reason} ${c.field}`)).toEqual([
      'FieldValueTypeInvalid spec.rules[0].backendRefs',
      'FieldValueInvalid <nil>',
    ]);
  });

  it('stores the defaulted object, and pruned fields are gone', async () => {
    const res = await send('POST', ROUTES, route('ok', { typo: true }));
    expect(res.status).toBe(201);
    const spec = (server.get('httproutes', 'default', 'ok') as { spec: Record<string, unknown> }).spec;
    expect(spec.parentRefs).toEqual([{ name: 'gw', group: 'gateway.networking.k8s.io', kind: 'Gateway' }]);
    expect(spec.rules).toEqual([
      {
        matches: [{ path: { type: 'PathPrefix', value: '/' } }],
        backendRefs: [{ name: 'svc', port: 80, group: '', kind: 'Service', weight: 1 }],
      },
    ]);
  });

  it('validates updates and merge patches, with several causes at once', async () => {
    await send('POST', ROUTES, route('r', {}));
    const patched = await send(
      'PATCH',
      `${ROUTES}/r`,
      { spec: { rules: [{ matches: [{ path: { type: 'PathPrefix', value: 'x//y' } }], backendRefs: [] }] } },
      'application/merge-patch+json',
    );
    expect(patched.status).toBe(422);
    const causes = (patched.body.details as { causes: { message: string }[] }).causes.map((c) => c.message);
    expect(causes).toEqual([
      `Invalid value: "object": value must be an absolute path and start with '/' when type one of ['Exact', 'PathPrefix']`,
      `Invalid value: "object": must not contain '//' when type one of ['Exact', 'PathPrefix']`,
    ]);
    expect(patched.body.message).toMatch(
      /^HTTPRoute\.gateway\.networking\.k8s\.io "r" is invalid: \[spec\.rules/,
    );
  });

  it('validates status subresource updates against the status schema', async () => {
    await send('POST', ROUTES, route('r', {}));
    const res = await send(
      'PATCH',
      `${ROUTES}/r/status`,
      {
        status: {
          parents: [{ parentRef: { name: 'gw' }, controllerName: 'not a controller', conditions: [] }],
        },
      },
      'application/merge-patch+json',
    );
    expect(res.status).toBe(422);
    const causes = (res.body.details as { causes: { field: string }[] }).causes.map((c) => c.field);
    expect(causes).toEqual(['status.parents[0].controllerName', 'status.parents[0].conditions']);
  });

  it('enforces transition rules on update: GatewayClass controllerName is immutable', async () => {
    const path = '/apis/gateway.networking.k8s.io/v1/gatewayclasses';
    await send('POST', path, {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'GatewayClass',
      metadata: { name: 'gc' },
      spec: { controllerName: 'example.com/a' },
    });
    const res = await send(
      'PATCH',
      `${path}/gc`,
      { spec: { controllerName: 'example.com/b' } },
      'application/merge-patch+json',
    );
    expect(res.status).toBe(422);
    expect(res.body.message).toBe(
      'GatewayClass.gateway.networking.k8s.io "gc" is invalid: spec.controllerName: Invalid value: "string": Value is immutable',
    );
  });

  it('rejects the GatewayClass description deploy/ used to ship (longer than 64)', async () => {
    const res = await send('POST', '/apis/gateway.networking.k8s.io/v1/gatewayclasses', {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'GatewayClass',
      metadata: { name: 'gc' },
      spec: { controllerName: 'example.com/a', description: 'd'.repeat(65) },
    });
    expect(res.status).toBe(422);
    expect((res.body.details as { causes: unknown[] }).causes).toEqual([
      {
        reason: 'FieldValueTooLong',
        message: 'Too long: may not be more than 64 bytes',
        field: 'spec.description',
      },
    ]);
  });

  it('defaults Gateway status on create from the CRD', async () => {
    const res = await send('POST', GATEWAYS, {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'Gateway',
      metadata: { name: 'gw' },
      spec: { gatewayClassName: 'gc', listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }] },
    });
    expect(res.status).toBe(201);
    const conditions = (res.body.status as { conditions: { type: string; reason: string }[] }).conditions;
    expect(conditions.map((c) => `${c.type}=${c.reason}`)).toEqual([
      'Accepted=Pending',
      'Programmed=Pending',
    ]);
  });
});
