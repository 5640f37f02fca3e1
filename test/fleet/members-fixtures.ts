import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { MemberView } from '../../src/fleet/member-view.ts';
import { type KubeApiServer, startKubeApiServer } from '../support/kube-api-server/index.ts';

interface PluginState {
  mode: string;
  tokens: Record<string, string>;
  expiresAt?: string;
  cert?: string;
  key?: string;
}

/**
 * A real exec credential plugin (a node script) whose behaviour the test steers through a JSON state file:
 * `mode` ok | fail | hang | garbage | notcred (JSON that is no ExecCredential, holding the token) | expired | cert; `tokens` by API server URL (read from KUBERNETES_EXEC_INFO);
 * `expiresAt` (RFC 3339); `cert`/`key` (PEM) for `cert`, a client certificate instead of a token. Every run appends its KUBERNETES_EXEC_INFO to a log file, and prints a secret on stderr
 * that must never show up in what the gateway reports.
 */
export class ExecPlugin {
  readonly dir = mkdtempSync(join(tmpdir(), 'csg-exec-'));
  readonly script = join(this.dir, 'plugin.mjs');
  readonly stateFile = join(this.dir, 'state.json');
  readonly logFile = join(this.dir, 'runs.log');
  #state: PluginState = { mode: 'ok', tokens: {} };

  constructor() {
    writeFileSync(
      this.script,
      `import { appendFileSync, readFileSync } from 'node:fs';
const [stateFile, logFile] = process.argv.slice(2);
const state = JSON.parse(readFileSync(stateFile, 'utf8'));
const info = JSON.parse(process.env.KUBERNETES_EXEC_INFO ?? '{}');
appendFileSync(logFile, JSON.stringify(info) + '\\n');
const token = state.tokens[info.spec?.cluster?.server ?? ''] ?? 'no-token';
process.stderr.write('plugin debug: stderr-secret-' + token + '\\n');
if (state.mode === 'fail') process.exit(3);
if (state.mode === 'hang') setInterval(() => {}, 1000);
else if (state.mode === 'garbage') process.stdout.write('token=' + token);
else if (state.mode === 'notcred') process.stdout.write(JSON.stringify({ kind: 'Config', users: [{ user: { token } }] }));
else if (state.mode === 'cert') {
  process.stdout.write(JSON.stringify({
    apiVersion: 'client.authentication.k8s.io/v1',
    kind: 'ExecCredential',
    status: { clientCertificateData: state.cert, clientKeyData: state.key },
  }));
} else {
  const expirationTimestamp = state.mode === 'expired' ? '2000-01-01T00:00:00Z' : state.expiresAt;
  process.stdout.write(JSON.stringify({
    apiVersion: 'client.authentication.k8s.io/v1',
    kind: 'ExecCredential',
    status: { token, ...(expirationTimestamp ? { expirationTimestamp } : {}) },
  }));
}
`,
    );
    this.#write();
    writeFileSync(this.logFile, '');
  }

  set(state: Partial<PluginState>): void {
    this.#state = { ...this.#state, ...state };
    this.#write();
  }

  get state(): PluginState {
    return this.#state;
  }

  /** The KUBERNETES_EXEC_INFO of every run so far. */
  runs(): { apiVersion: string; spec: { interactive: boolean; cluster?: { server: string } } }[] {
    return readFileSync(this.logFile, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line));
  }

  providerFile(name = 'test-exec', timeoutless = true): string {
    const file = join(this.dir, 'providers.json');
    writeFileSync(
      file,
      JSON.stringify({
        providers: [
          {
            name,
            execConfig: {
              apiVersion: 'client.authentication.k8s.io/v1',
              command: process.execPath,
              args: [this.script, this.stateFile, this.logFile],
              provideClusterInfo: timeoutless,
              interactiveMode: 'Never',
            },
          },
        ],
      }),
    );
    return file;
  }

  #write(): void {
    writeFileSync(this.stateFile, JSON.stringify(this.#state));
  }
}

/** A member API server that accepts only the token the plugin hands out for it. */
export async function startMember(plugin: ExecPlugin, token: string, tls?: { cert: string; key: string }) {
  const server: KubeApiServer = await startKubeApiServer({
    bookmarkIntervalMs: 200,
    ...(tls ? { tls } : {}),
  });
  plugin.set({ tokens: { ...plugin.state.tokens, [server.url]: token } });
  server.acceptToken = (t) => t === plugin.state.tokens[server.url];
  return server;
}

/** An exported Service `shop/web` with one ready endpoint, as a member would hold it. */
export function exportWeb(server: KubeApiServer, address: string, clusterName?: string, port = 8080): void {
  if (!server.get('namespaces', undefined, 'shop')) {
    server.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } });
  }
  server.create({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'web', namespace: 'shop' },
    spec: { ports: [{ name: 'http', port: 80, protocol: 'TCP' }] },
  });
  server.create({
    apiVersion: 'multicluster.x-k8s.io/v1beta1',
    kind: 'ServiceExport',
    metadata: { name: 'web', namespace: 'shop' },
  });
  server.create({
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: 'web-1', namespace: 'shop', labels: { 'kubernetes.io/service-name': 'web' } },
    addressType: 'IPv4',
    endpoints: [{ addresses: [address], conditions: { ready: true } }],
    ports: [{ name: 'http', port, protocol: 'TCP' }],
  });
  if (clusterName) {
    server.create({
      apiVersion: 'about.k8s.io/v1alpha1',
      kind: 'ClusterProperty',
      metadata: { name: 'cluster.clusterset.k8s.io' },
      spec: { value: clusterName },
    });
  }
}

/** A ClusterProfile manifest whose access provider points at `server`. */
export function profileYaml(
  name: string,
  server: string,
  options: {
    provider?: string;
    caData?: string;
    properties?: Record<string, string>;
    unhealthy?: boolean;
  } = {},
): string {
  const cluster = options.caData
    ? `        certificate-authority-data: ${options.caData}\n        tls-server-name: localhost`
    : '        insecure-skip-tls-verify: true';
  const properties = Object.entries(options.properties ?? {})
    .map(([n, v]) => `    - name: ${n}\n      value: ${v}`)
    .join('\n');
  return `apiVersion: multicluster.x-k8s.io/v1alpha1
kind: ClusterProfile
metadata:
  name: ${name}
  namespace: fleet
spec:
  displayName: ${name}
  clusterManager:
    name: test
status:
  accessProviders:
    - name: ${options.provider ?? 'test-exec'}
      cluster:
        server: ${server}
${cluster}
${properties ? `  properties:\n${properties}\n` : ''}${
  options.unhealthy
    ? `  conditions:
    - type: ControlPlaneHealthy
      status: "False"
      reason: Unreachable
      message: agent lost
      lastTransitionTime: "2026-01-01T00:00:00Z"
`
    : ''
}`;
}

/** Polls `views()` until `check` passes (it throws until then). */
export async function eventually<T>(
  read: () => T,
  check: (value: T) => void,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = read();
    try {
      check(value);
      return value;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

export function byName(views: readonly MemberView[], name: string): MemberView {
  const view = views.find((v) => v.name === name);
  expect(view, `member ${name} in ${views.map((v) => `${v.name}:${v.state}`).join(', ')}`).toBeDefined();
  return view as MemberView;
}
