import { spawn } from 'node:child_process';
import { isRecord } from '../snapshot/json-object.ts';

/**
 * Kubeconfig exec credential plugins (client.authentication.k8s.io v1 and v1beta1), run the way client-go's
 * exec authenticator runs them, for a long-running controller:
 * - the credential is cached until shortly before its `expirationTimestamp` (10 s, or half its life when that is
 *   shorter), or, without one, until the server answers 401;
 * - one run at a time, however many requests are waiting for it;
 * - a run that hangs is killed after a timeout; stdout is bounded;
 * - errors say what went wrong (exit code, timeout, malformed output, expired credential) but never carry the
 *   plugin's stdout or stderr: both may hold the secret.
 * @kubernetes/client-node's ExecAuth has none of the timeout, the 401 rerun, KUBERNETES_EXEC_INFO or the
 * secret-free errors (it rejects with the plugin's stderr), hence this one.
 */

export type ExecApiVersion = 'client.authentication.k8s.io/v1' | 'client.authentication.k8s.io/v1beta1';

/** `users[].user.exec` of a kubeconfig, and `execConfig` of a Cluster Profile API provider file. */
export interface ExecConfig {
  readonly apiVersion: ExecApiVersion;
  readonly command: string;
  readonly args: readonly string[];
  readonly env: readonly { readonly name: string; readonly value: string }[];
  readonly provideClusterInfo: boolean;
  readonly installHint?: string;
  readonly interactiveMode?: 'Never' | 'IfAvailable' | 'Always';
}

/** What `KUBERNETES_EXEC_INFO` tells the plugin about the cluster when `provideClusterInfo` is set. */
export interface ExecClusterInfo {
  readonly server: string;
  readonly 'certificate-authority-data'?: string;
  readonly 'tls-server-name'?: string;
  readonly 'insecure-skip-tls-verify'?: boolean;
  readonly 'proxy-url'?: string;
  /** The `client.authentication.k8s.io/exec` extension of the cluster, handed to the plugin as is. */
  readonly config?: unknown;
}

export interface ExecCredential {
  readonly token?: string;
  readonly clientCertificateData?: string;
  readonly clientKeyData?: string;
  /** Epoch milliseconds; undefined: valid until the server refuses it. */
  readonly expiresAtMs?: number;
}

export class ExecCredentialError extends Error {
  readonly code:
    | 'EXEC_PLUGIN_NOT_FOUND'
    | 'EXEC_PLUGIN_FAILED'
    | 'EXEC_PLUGIN_TIMEOUT'
    | 'EXEC_PLUGIN_BAD_OUTPUT'
    | 'EXEC_CREDENTIAL_EXPIRED'
    | 'EXEC_PLUGIN_INTERACTIVE';

  constructor(code: ExecCredentialError['code'], message: string) {
    super(message);
    this.name = 'ExecCredentialError';
    this.code = code;
  }
}

export interface ExecCredentialSourceOptions {
  readonly config: ExecConfig;
  readonly cluster?: ExecClusterInfo;
  /** A run taking longer is killed and counts as a failure. Default 30 s. */
  readonly timeoutMs?: number;
  /** The credential is renewed this long before it expires. Default 10 s. */
  readonly refreshBeforeExpiryMs?: number;
  readonly now?: () => number;
  /** The gateway's environment; the plugin gets it plus `env` and `KUBERNETES_EXEC_INFO`. */
  readonly baseEnv?: NodeJS.ProcessEnv;
}

const MAX_OUTPUT_BYTES = 1024 * 1024;
const API_VERSIONS: readonly string[] = [
  'client.authentication.k8s.io/v1',
  'client.authentication.k8s.io/v1beta1',
];

/** One plugin's credential for one cluster: cached, renewed before expiry, rerun once after a 401. */
export class ExecCredentialSource {
  readonly #o: ExecCredentialSourceOptions;
  readonly #now: () => number;
  #cached: ExecCredential | undefined;
  #running: Promise<ExecCredential> | undefined;
  #obtainedAtMs = 0;
  /** Successful runs so far (for operators and tests). */
  runs = 0;

  constructor(options: ExecCredentialSourceOptions) {
    this.#o = options;
    this.#now = options.now ?? Date.now;
  }

  /** The current credential, running the plugin when there is none or it is about to expire. */
  get(): Promise<ExecCredential> {
    const cached = this.#cached;
    if (cached && !this.#expiring(cached)) return Promise.resolve(cached);
    this.#running ??= this.#run().finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  /**
   * The server refused `used` (401): forget it so the next request runs the plugin again. A refusal of an older
   * credential than the cached one changes nothing, so a burst of 401s reruns the plugin once.
   */
  invalidate(used?: ExecCredential): void {
    if (used === undefined || used === this.#cached) this.#cached = undefined;
  }

  get current(): ExecCredential | undefined {
    return this.#cached;
  }

  #expiring(credential: ExecCredential): boolean {
    if (credential.expiresAtMs === undefined) return false;
    // A short-lived credential is renewed halfway through its life, not on every request.
    const lifetimeMs = credential.expiresAtMs - this.#obtainedAtMs;
    const marginMs = Math.min(this.#o.refreshBeforeExpiryMs ?? 10_000, Math.max(0, lifetimeMs / 2));
    return this.#now() >= credential.expiresAtMs - marginMs;
  }

  async #run(): Promise<ExecCredential> {
    const { config } = this.#o;
    if (config.interactiveMode === 'Always') {
      throw new ExecCredentialError(
        'EXEC_PLUGIN_INTERACTIVE',
        `exec plugin ${config.command} needs interactiveMode Always; the gateway has no terminal`,
      );
    }
    const stdout = await runPlugin(config, this.#execInfo(), this.#o.timeoutMs ?? 30_000, this.#o.baseEnv);
    const credential = parseExecCredential(stdout, config.apiVersion, config.command);
    if (credential.expiresAtMs !== undefined && credential.expiresAtMs <= this.#now()) {
      throw new ExecCredentialError(
        'EXEC_CREDENTIAL_EXPIRED',
        `exec plugin ${config.command} returned a credential that expired at ${new Date(credential.expiresAtMs).toISOString()}`,
      );
    }
    this.#cached = credential;
    this.#obtainedAtMs = this.#now();
    this.runs++;
    return credential;
  }

  #execInfo(): string {
    const { config, cluster } = this.#o;
    const spec: Record<string, unknown> = { interactive: false };
    if (config.provideClusterInfo && cluster) spec.cluster = cluster;
    return JSON.stringify({ apiVersion: config.apiVersion, kind: 'ExecCredential', spec });
  }
}

function runPlugin(
  config: ExecConfig,
  execInfo: string,
  timeoutMs: number,
  baseEnv: NodeJS.ProcessEnv = process.env,
): Promise<string> {
  const env: NodeJS.ProcessEnv = { ...baseEnv, KUBERNETES_EXEC_INFO: execInfo };
  for (const { name, value } of config.env) env[name] = value;
  return new Promise((resolve, reject) => {
    const child = spawn(config.command, [...config.args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    let bytes = 0;
    let failure: ExecCredentialError | undefined;
    const kill = (error: ExecCredentialError): void => {
      failure ??= error;
      child.kill('SIGKILL');
    };
    const timer = setTimeout(
      () =>
        kill(
          new ExecCredentialError(
            'EXEC_PLUGIN_TIMEOUT',
            `exec plugin ${config.command} did not finish within ${timeoutMs} ms; killed`,
          ),
        ),
      timeoutMs,
    );
    child.stdout.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > MAX_OUTPUT_BYTES) {
        kill(
          new ExecCredentialError(
            'EXEC_PLUGIN_BAD_OUTPUT',
            `exec plugin ${config.command} wrote more than ${MAX_OUTPUT_BYTES} bytes; killed`,
          ),
        );
      } else chunks.push(chunk);
    });
    // stderr is drained and dropped: plugins print tokens and URLs with secrets there too.
    child.stderr.resume();
    child.on('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      const hint = config.installHint ? ` (${config.installHint.trim()})` : '';
      reject(
        err.code === 'ENOENT'
          ? new ExecCredentialError('EXEC_PLUGIN_NOT_FOUND', `exec plugin ${config.command} not found${hint}`)
          : new ExecCredentialError(
              'EXEC_PLUGIN_FAILED',
              `exec plugin ${config.command} could not start: ${err.code ?? err.message}`,
            ),
      );
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (failure) reject(failure);
      else if (code !== 0) {
        reject(
          new ExecCredentialError(
            'EXEC_PLUGIN_FAILED',
            `exec plugin ${config.command} exited with ${code === null ? `signal ${signal}` : `code ${code}`} (its output is not shown: it may hold secrets)`,
          ),
        );
      } else resolve(Buffer.concat(chunks).toString('utf8'));
    });
  });
}

/** Decodes a plugin's stdout; the error names what is wrong and never quotes the output. */
export function parseExecCredential(stdout: string, apiVersion: string, command: string): ExecCredential {
  const bad = (what: string): ExecCredentialError =>
    new ExecCredentialError(
      'EXEC_PLUGIN_BAD_OUTPUT',
      `not an ExecCredential: exec plugin ${command} exited 0 but printed ${what} (not shown: it may hold credentials)`,
    );
  let doc: unknown;
  try {
    doc = JSON.parse(stdout);
  } catch {
    throw bad('something that is not JSON');
  }
  if (!isRecord(doc))
    throw bad(
      `JSON that is not an object (${doc === null ? 'null' : Array.isArray(doc) ? 'an array' : typeof doc})`,
    );
  if (doc.kind !== 'ExecCredential') {
    throw bad(doc.kind === undefined ? 'an object without kind' : 'an object of another kind');
  }
  if (doc.apiVersion !== apiVersion) {
    throw bad(
      `an ExecCredential of apiVersion ${JSON.stringify(String(doc.apiVersion)).slice(0, 80)}, not ${apiVersion}`,
    );
  }
  const status = doc.status;
  if (!isRecord(status)) throw bad('an ExecCredential without status');
  const text = (key: string): string | undefined => {
    const value = status[key];
    if (value === undefined || value === null || value === '') return undefined;
    if (typeof value !== 'string') throw bad(`an ExecCredential whose status.${key} is not a string`);
    return value;
  };
  const token = text('token');
  const clientCertificateData = text('clientCertificateData');
  const clientKeyData = text('clientKeyData');
  if (Boolean(clientCertificateData) !== Boolean(clientKeyData)) {
    throw bad('an ExecCredential with only one of clientCertificateData and clientKeyData');
  }
  if (!token && !clientCertificateData)
    throw bad('an ExecCredential with neither a token nor a client certificate');
  const expiry = text('expirationTimestamp');
  let expiresAtMs: number | undefined;
  if (expiry !== undefined) {
    expiresAtMs = Date.parse(expiry);
    if (!/^\d{4}-\d{2}-\d{2}T/.test(expiry) || Number.isNaN(expiresAtMs)) {
      throw bad('an ExecCredential whose status.expirationTimestamp is not an RFC 3339 time');
    }
  }
  return {
    ...(token ? { token } : {}),
    ...(clientCertificateData && clientKeyData ? { clientCertificateData, clientKeyData } : {}),
    ...(expiresAtMs !== undefined ? { expiresAtMs } : {}),
  };
}

/** Decodes an `execConfig` (provider file) or `exec` (kubeconfig) object; throws a message naming the field. */
export function decodeExecConfig(value: unknown, where: string): ExecConfig {
  if (!isRecord(value)) throw new Error(`${where}: must be an object`);
  const { apiVersion, command, args, env, provideClusterInfo, installHint, interactiveMode } = value;
  if (typeof apiVersion !== 'string' || !API_VERSIONS.includes(apiVersion)) {
    throw new Error(`${where}.apiVersion: must be one of ${API_VERSIONS.join(', ')}`);
  }
  if (typeof command !== 'string' || command === '') throw new Error(`${where}.command: required`);
  if (
    args !== undefined &&
    args !== null &&
    (!Array.isArray(args) || args.some((a) => typeof a !== 'string'))
  ) {
    throw new Error(`${where}.args: must be a list of strings`);
  }
  const envList: { name: string; value: string }[] = [];
  if (env !== undefined && env !== null) {
    if (!Array.isArray(env)) throw new Error(`${where}.env: must be a list of {name, value}`);
    for (const [i, e] of env.entries()) {
      if (!isRecord(e) || typeof e.name !== 'string' || typeof e.value !== 'string') {
        throw new Error(`${where}.env[${i}]: must have string name and value`);
      }
      envList.push({ name: e.name, value: e.value });
    }
  }
  if (provideClusterInfo !== undefined && typeof provideClusterInfo !== 'boolean') {
    throw new Error(`${where}.provideClusterInfo: must be true or false`);
  }
  if (installHint !== undefined && typeof installHint !== 'string') {
    throw new Error(`${where}.installHint: must be a string`);
  }
  if (
    interactiveMode !== undefined &&
    interactiveMode !== 'Never' &&
    interactiveMode !== 'IfAvailable' &&
    interactiveMode !== 'Always'
  ) {
    throw new Error(`${where}.interactiveMode: must be Never, IfAvailable or Always`);
  }
  return {
    apiVersion: apiVersion as ExecApiVersion,
    command,
    args: Array.isArray(args) ? (args as string[]) : [],
    env: envList,
    provideClusterInfo: provideClusterInfo === true,
    ...(installHint !== undefined ? { installHint } : {}),
    ...(interactiveMode !== undefined ? { interactiveMode } : {}),
  };
}
