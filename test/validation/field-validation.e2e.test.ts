import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type KubeApiServer, startKubeApiServer } from '../support/kube-api-server/index.ts';

/**
 * The API test server's strict field validation (KEP-2885), as kube-apiserver answers kubectl (which sends
 * fieldValidation=Strict) and clients that send nothing (Warn, the server's default).
 */
let server: KubeApiServer;
beforeEach(async () => {
  server = await startKubeApiServer();
});
afterEach(async () => {
  await server.stop();
});

const ROUTES = '/apis/gateway.networking.k8s.io/v1/namespaces/default/httproutes';
const SERVICES = '/api/v1/namespaces/default/services';
const IMPORTS = '/apis/multicluster.x-k8s.io/v1alpha1/namespaces/default/serviceimports';

interface Answer {
  readonly status: number;
  readonly body: Record<string, unknown>;
  readonly warnings: string[];
}

/** Sends `text` as written (repeated keys survive only in raw JSON). */
async function send(
  method: string,
  path: string,
  text: string,
  contentType = 'application/json',
): Promise<Answer> {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: 'Bearer test-token', 'content-type': contentType },
    body: text,
  });
  const warning = response.headers.get('warning');
  return {
    status: response.status,
    body: (await response.json()) as Record<string, unknown>,
    // fetch joins repeated headers with ", "; each value is `299 - "<quoted text>"`.
    warnings: warning
      ? [...warning.matchAll(/299 - ("(?:[^"\\]|\\.)*")/g)].map((m) => JSON.parse(m[1] as string))
      : [],
  };
}

/** An HTTPRoute with a typo in a rule, an unknown metadata field and a key written twice. */
const MISTAKEN_ROUTE = `{
  "apiVersion": "gateway.networking.k8s.io/v1",
  "kind": "HTTPRoute",
  "metadata": {"name": "web", "name": "web", "labelz": {"a": "b"}},
  "spec": {
    "parentRefs": [{"name": "gw", "sectionNam": "http"}],
    "rules": [{"backendRef": [{"name": "svc", "port": 80}], "backendRefs": [{"name": "svc", "port": 80}]}]
  }
}`;

const STRICT_ERROR =
  'strict decoding error: duplicate field "metadata.name", unknown field "metadata.labelz", unknown field "spec.parentRefs[0].sectionNam", unknown field "spec.rules[0].backendRef"';

describe('fieldValidation on create', () => {
  it('Strict refuses with 400 naming every duplicate and unknown field, as kubectl apply shows it', async () => {
    const answer = await send('POST', `${ROUTES}?fieldValidation=Strict`, MISTAKEN_ROUTE);
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({
      kind: 'Status',
      status: 'Failure',
      reason: 'BadRequest',
      code: 400,
      message: `HTTPRoute in version "v1" cannot be handled as a HTTPRoute: ${STRICT_ERROR}`,
    });
    expect(server.get('httproutes', 'default', 'web')).toBeUndefined();
  });

  it('Warn (the default when the client sends nothing) stores the object without them and says so in Warning headers', async () => {
    for (const query of ['?fieldValidation=Warn', '']) {
      const answer = await send('POST', `${ROUTES}${query}`, MISTAKEN_ROUTE);
      expect(answer.status).toBe(201);
      expect(answer.warnings).toEqual([
        'duplicate field "metadata.name"',
        'unknown field "metadata.labelz"',
        'unknown field "spec.parentRefs[0].sectionNam"',
        'unknown field "spec.rules[0].backendRef"',
      ]);
      const stored = server.get('httproutes', 'default', 'web') as {
        metadata: Record<string, unknown>;
        spec: { parentRefs: unknown[]; rules: Record<string, unknown>[] };
      };
      expect(stored.metadata.labelz).toBeUndefined();
      expect(stored.spec.parentRefs[0]).not.toHaveProperty('sectionNam');
      expect(Object.keys(stored.spec.rules[0] ?? {})).not.toContain('backendRef');
      server.delete('httproutes', 'default', 'web');
    }
  });

  it('Ignore stores the object without them and says nothing', async () => {
    const answer = await send('POST', `${ROUTES}?fieldValidation=Ignore`, MISTAKEN_ROUTE);
    expect(answer.status).toBe(201);
    expect(answer.warnings).toEqual([]);
    expect((server.get('httproutes', 'default', 'web') as { metadata: object }).metadata).not.toHaveProperty(
      'labelz',
    );
  });

  it('an unknown directive is a 422 on the options, as upstream validates CreateOptions', async () => {
    const answer = await send('POST', `${ROUTES}?fieldValidation=strict`, MISTAKEN_ROUTE);
    expect(answer.status).toBe(422);
    expect(answer.body.message).toBe(
      'CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "strict": supported values: "Ignore", "Warn", "Strict"',
    );
  });

  it('a built-in kind is checked against its fields too (Service spec.selectr)', async () => {
    const svc = JSON.stringify({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web' },
      spec: { selectr: { app: 'web' }, ports: [{ port: 80, targetport: 8080 }] },
    });
    const strict = await send('POST', `${SERVICES}?fieldValidation=Strict`, svc);
    expect(strict.status).toBe(400);
    expect(strict.body.message).toBe(
      // Typed kinds report in the order the fields are written (custom resources: sorted, as pruning does).
      'Service in version "v1" cannot be handled as a Service: strict decoding error: unknown field "spec.selectr", unknown field "spec.ports[0].targetport"',
    );
    const warn = await send('POST', SERVICES, svc);
    expect(warn.status).toBe(201);
    expect(warn.warnings).toEqual([
      'unknown field "spec.selectr"',
      'unknown field "spec.ports[0].targetport"',
    ]);
    expect((server.get('services', 'default', 'web') as { spec: object }).spec).not.toHaveProperty('selectr');
  });

  it('x-kubernetes-preserve-unknown-fields and map values are not unknown fields; CRD-typed ServiceImport fields are', async () => {
    const imported = (extra: Record<string, unknown>) =>
      JSON.stringify({
        apiVersion: 'multicluster.x-k8s.io/v1alpha1',
        kind: 'ServiceImport',
        metadata: { name: 'web', labels: { anything: 'goes' }, annotations: { 'a.b/c': 'd' } },
        spec: { type: 'ClusterSetIP', ports: [{ port: 80, protocol: 'TCP' }], ...extra },
      });
    expect((await send('POST', `${IMPORTS}?fieldValidation=Strict`, imported({}))).status).toBe(201);
    server.delete('serviceimports', 'default', 'web');
    const typo = await send(
      'POST',
      `${IMPORTS}?fieldValidation=Strict`,
      imported({ ips: ['10.0.0.1'], prots: [] }),
    );
    expect(typo.status).toBe(400);
    expect(typo.body.message).toContain('strict decoding error: unknown field "spec.prots"');
  });
});

describe('ServiceImport status.endpointSliceObjects (KEP-1645)', () => {
  const imported = (status: Record<string, unknown>) =>
    JSON.stringify({
      apiVersion: 'multicluster.x-k8s.io/v1beta1',
      kind: 'ServiceImport',
      metadata: { name: 'web' },
      spec: { type: 'ClusterSetIP', ips: ['242.0.0.7'], ports: [{ port: 80, protocol: 'TCP' }] },
      status,
    });
  const BETA = IMPORTS.replace('v1alpha1', 'v1beta1');

  it('is a known field under Strict; the status subresource stores Present | Absent and refuses anything else', async () => {
    // On create the status stanza is dropped (status subresource), but strict decoding knows the field.
    expect(
      (await send('POST', `${BETA}?fieldValidation=Strict`, imported({ endpointSliceObjects: 'Absent' })))
        .status,
    ).toBe(201);
    const { metadata } = server.get('serviceimports', 'default', 'web') as {
      metadata: { resourceVersion: string };
    };
    const withVersion = (value: string) => {
      const body = JSON.parse(imported({ endpointSliceObjects: value })) as {
        metadata: Record<string, unknown>;
      };
      body.metadata.resourceVersion = metadata.resourceVersion;
      return JSON.stringify(body);
    };
    const wrong = await send('PUT', `${BETA}/web/status?fieldValidation=Strict`, withVersion('Maybe'));
    expect(wrong.status).toBe(422);
    expect(wrong.body.message).toContain(
      'status.endpointSliceObjects: Unsupported value: "Maybe": supported values: "Present", "Absent"',
    );
    expect(
      (await send('PUT', `${BETA}/web/status?fieldValidation=Strict`, withVersion('Absent'))).status,
    ).toBe(200);
    expect(server.get('serviceimports', 'default', 'web')).toMatchObject({
      status: { endpointSliceObjects: 'Absent' },
    });
  });
});

describe('fieldValidation on update and patch', () => {
  const valid = JSON.stringify({
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: { name: 'web' },
    spec: { parentRefs: [{ name: 'gw' }], rules: [{ backendRefs: [{ name: 'svc', port: 80 }] }] },
  });

  it('a merge patch with an unknown field is a 422 on `patch` under Strict, a warning otherwise', async () => {
    expect((await send('POST', ROUTES, valid)).status).toBe(201);
    const patch = '{"spec": {"hostnames": ["a.example"], "hostname": "b.example"}}';
    const strict = await send(
      'PATCH',
      `${ROUTES}/web?fieldValidation=Strict`,
      patch,
      'application/merge-patch+json',
    );
    expect(strict.status).toBe(422);
    expect(strict.body.reason).toBe('Invalid');
    expect(String(strict.body.message)).toMatch(
      /^ "" is invalid: patch: Invalid value: ".*": strict decoding error: unknown field "spec.hostname"$/,
    );
    expect((server.get('httproutes', 'default', 'web') as { spec: object }).spec).not.toHaveProperty(
      'hostnames',
    );
    const warn = await send('PATCH', `${ROUTES}/web`, patch, 'application/merge-patch+json');
    expect(warn.status).toBe(200);
    expect(warn.warnings).toEqual(['unknown field "spec.hostname"']);
    expect(
      (server.get('httproutes', 'default', 'web') as { spec: { hostnames: string[] } }).spec.hostnames,
    ).toEqual(['a.example']);
  });

  it('an update (PUT) with a repeated key is refused under Strict', async () => {
    const created = await send('POST', ROUTES, valid);
    const rv = (created.body.metadata as { resourceVersion: string }).resourceVersion;
    const body = valid
      .replace('"metadata": {', '')
      .replace(
        '"metadata":{"name":"web"}',
        `"metadata":{"name":"web","resourceVersion":"${rv}","resourceVersion":"${rv}"}`,
      );
    const answer = await send('PUT', `${ROUTES}/web?fieldValidation=Strict`, body);
    expect(answer.status).toBe(400);
    expect(answer.body.message).toBe(
      'HTTPRoute in version "v1" cannot be handled as a HTTPRoute: strict decoding error: duplicate field "metadata.resourceVersion"',
    );
  });
});
