import { Writable } from 'node:stream';
import { KubeConfig } from '@kubernetes/client-node';
import { type Logger, pino } from 'pino';
import type { Snapshot } from '../../src/snapshot/snapshot.ts';
import {
  type KubeApiServer,
  type KubeApiServerOptions,
  startKubeApiServer,
} from '../support/kube-api-server/index.ts';

export interface LogCapture {
  readonly logger: Logger;
  readonly lines: { readonly level: number; readonly msg: string; readonly [key: string]: unknown }[];
}

/** A pino logger whose JSON lines are kept for assertions. */
export function captureLogs(): LogCapture {
  const lines: LogCapture['lines'] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line) lines.push(JSON.parse(line));
      done();
    },
  });
  return { logger: pino({ level: 'debug' }, stream), lines };
}

export function kubeConfigFor(server: KubeApiServer): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromString(server.kubeconfigYaml());
  return kc;
}

export async function withServer(options?: KubeApiServerOptions): Promise<KubeApiServer> {
  return startKubeApiServer({ bookmarkIntervalMs: 200, ...options });
}

/** Polls until `check` returns a value (not undefined/false), or fails after `timeoutMs`. */
export async function eventually<T>(
  check: () => T | undefined | false | Promise<T | undefined | false>,
  what: string,
  timeoutMs = 5000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Collects snapshots a source emits. */
export class SnapshotRecorder {
  readonly snapshots: Snapshot[] = [];
  readonly onSnapshot = (snapshot: Snapshot): void => {
    this.snapshots.push(snapshot);
  };

  get latest(): Snapshot | undefined {
    return this.snapshots[this.snapshots.length - 1];
  }

  /** Waits for a snapshot satisfying `predicate` and returns it. */
  async waitFor(predicate: (s: Snapshot) => boolean, what: string, timeoutMs = 5000): Promise<Snapshot> {
    return eventually(
      () => {
        const s = this.latest;
        return s && predicate(s) ? s : undefined;
      },
      what,
      timeoutMs,
    );
  }
}

export const GATEWAY_API = 'gateway.networking.k8s.io/v1';
export const CONTROLLER = 'clusterset-gateway.io/gateway-controller';

export function gatewayClass(name = 'clusterset'): Record<string, unknown> {
  return {
    apiVersion: GATEWAY_API,
    kind: 'GatewayClass',
    metadata: { name },
    spec: { controllerName: CONTROLLER },
  };
}

export function gateway(name = 'gw', namespace = 'default'): Record<string, unknown> {
  return {
    apiVersion: GATEWAY_API,
    kind: 'Gateway',
    metadata: { name, namespace },
    spec: { gatewayClassName: 'clusterset', listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }] },
  };
}

export function httpRoute(name: string, namespace = 'default', backend = 'web'): Record<string, unknown> {
  return {
    apiVersion: GATEWAY_API,
    kind: 'HTTPRoute',
    metadata: { name, namespace },
    spec: {
      parentRefs: [{ name: 'gw' }],
      rules: [{ backendRefs: [{ name: backend, port: 8080 }] }],
    },
  };
}

export function service(name: string, namespace = 'default'): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace },
    spec: { ports: [{ name: 'http', port: 8080 }] },
  };
}
