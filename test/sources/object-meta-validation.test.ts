import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { Snapshot } from '../../src/snapshot/snapshot.ts';
import { FileSource, formatProblem } from '../../src/sources/file/file-source.ts';

/**
 * Names, namespaces and labels kube-apiserver refuses (apimachinery's ObjectMeta validation) are refused by the file
 * source too, at their line; before, `name: Web_Route` became a route no cluster could ever hold.
 */
let dir: string;
let source: FileSource | undefined;
afterEach(async () => {
  await source?.stop();
  source = undefined;
  await rm(dir, { recursive: true, force: true });
});

async function load(text: string): Promise<{ snapshot: Snapshot; problems: string[] }> {
  dir = await mkdtemp(join(tmpdir(), 'object-meta-'));
  await writeFile(join(dir, 'objects.yaml'), text);
  source = new FileSource({ dir, logger: pino({ level: 'silent' }), debounceMs: 0 });
  let snapshot: Snapshot | undefined;
  await source.start((s) => {
    snapshot = s;
  });
  return { snapshot: snapshot as Snapshot, problems: source.problems.map(formatProblem) };
}

const SUBDOMAIN =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";

describe('ObjectMeta validation, as kube-apiserver does it', () => {
  it('refuses bad names per kind, bad namespaces and labels, each at its line; good objects load', async () => {
    const { problems, snapshot } = await load(`apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: Web_Route
  namespace: shop
spec: {}
---
apiVersion: v1
kind: Service
metadata:
  name: 1web
  namespace: shop
spec: { ports: [{ port: 80 }] }
---
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: Shop
spec: { ports: [{ port: 80 }] }
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: web.v1-abc
  namespace: shop
  labels:
    kubernetes.io/service-name: web
    -bad: x
addressType: IPv4
endpoints: []
---
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: shop
  labels: { app: "not ok!" }
spec: { ports: [{ port: 80 }] }
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: web.route-1
  namespace: shop
spec: {}
`);
    expect(problems).toEqual([
      `objects.yaml:4: HTTPRoute shop/Web_Route (not loaded): metadata.name: Invalid value: "Web_Route": ${SUBDOMAIN}`,
      'objects.yaml:11: Service shop/1web (not loaded): metadata.name: Invalid value: "1web": a DNS-1035 label must consist of lower case alphanumeric characters or \'-\', start with an alphabetic character, and end with an alphanumeric character',
      'objects.yaml:19: Service Shop/web (not loaded): metadata.namespace: Invalid value: "Shop": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or \'-\', and must start and end with an alphanumeric character',
      expect.stringMatching(
        /^objects\.yaml:29: EndpointSlice shop\/web\.v1-abc \(not loaded\): metadata\.labels\[-bad\]: Invalid value: "-bad": name part must consist of/,
      ),
      expect.stringMatching(
        /^objects\.yaml:38: Service shop\/web \(not loaded\): metadata\.labels\[app\]: Invalid value: "not ok!": a valid label must be/,
      ),
    ]);
    expect(snapshot.byKey('HTTPRoute').size).toBe(1);
    expect([...snapshot.byKey('HTTPRoute').values()].map((r) => r.metadata.name)).toEqual(['web.route-1']);
    expect(snapshot.byKey('Service').size).toBe(0);
  });

  it('refuses Secret and ConfigMap values the API server cannot decode, never showing a secret value', async () => {
    const { problems, snapshot } = await load(`apiVersion: v1
kind: Secret
metadata: { name: mixed, namespace: shop }
data: { tls.crt: bm90YWNlcnQ=, extra: 1 }
stringData: { password: hunter2 }
---
apiVersion: v1
kind: Secret
metadata: { name: typo, namespace: shop }
data:
  tls.key: "c3VwZXJ!zZWNyZXRrZXk"
  "bad key": Zm9v
---
apiVersion: v1
kind: Secret
metadata: { name: ok, namespace: shop }
data:
  tls.key: |
    c3VwZXJz
    ZWNyZXRrZXk=
stringData: { password: hunter2 }
---
apiVersion: v1
kind: ConfigMap
metadata: { name: ca, namespace: shop }
data: { ca.crt: 5 }
`);
    expect(problems).toEqual([
      'objects.yaml:4: Secret shop/mixed (not loaded): data[extra]: Invalid value: "number": must be a base64 string',
      'objects.yaml:11: Secret shop/typo (not loaded): data[tls.key]: Invalid value: "(not shown)": illegal base64 data',
      expect.stringMatching(
        /^objects\.yaml:12: Secret shop\/typo \(not loaded\): data\[bad key\]: Invalid value: "bad key": a valid config key/,
      ),
      'objects.yaml:26: ConfigMap shop/ca (not loaded): data[ca.crt]: Invalid value: "number": must be a string',
    ]);
    expect(problems.join('\n')).not.toContain('c3VwZXJ');
    const secrets = [...snapshot.byKey('Secret').values()];
    expect(secrets.map((s) => s.metadata.name)).toEqual(['ok']);
    const data = (secrets[0] as unknown as { data: Record<string, string> }).data;
    expect(Buffer.from(data.password ?? '', 'base64').toString()).toBe('hunter2');
    expect(Buffer.from(data['tls.key'] ?? '', 'base64').toString()).toBe('supersecretkey');
  });
});
