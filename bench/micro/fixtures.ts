import { DEFAULT_SERVICE_IMPORT_KINDS, type TranslateOptions } from '../../src/gateway/options.ts';
import { decodeResource } from '../../src/snapshot/decode.ts';
import type { AnyResource } from '../../src/snapshot/resources.ts';
import { Snapshot } from '../../src/snapshot/snapshot.ts';
import type { Endpoint } from '../harness/endpoints.ts';
import {
  type BackendLayout,
  CONTROLLER_NAME,
  type GatewayManifestOptions,
  gatewayObjects,
  type ListenerCertificate,
  type RouteLayout,
} from '../harness/gateway-manifests.ts';

/** Snapshots for micro benchmarks, built from the same objects the macro bench writes as YAML. */
export function snapshotOf(options: GatewayManifestOptions, certificate?: ListenerCertificate): Snapshot {
  const objects: AnyResource[] = [];
  for (const value of gatewayObjects(options, certificate)) {
    const decoded = decodeResource(value);
    if (!decoded.ok) throw new Error(`fixture does not decode: ${decoded.reason}`);
    objects.push(decoded.object);
  }
  return new Snapshot(objects);
}

export const TRANSLATE_OPTIONS: TranslateOptions = {
  controllerName: CONTROLLER_NAME,
  identity: { cluster: 'cluster-1', clusterset: 'bench', zone: 'zone-a' },
  serviceImportKinds: DEFAULT_SERVICE_IMPORT_KINDS,
  gatewayAddresses: ['127.0.0.1'],
  eastWest: false,
};

export const SINGLE_SERVICE: BackendLayout = {
  kind: 'service',
  endpoint: { address: '127.0.0.1', port: 8000 },
};

export function grid(hosts: number, pathsPerHost: number): RouteLayout {
  return { kind: 'grid', hosts, pathsPerHost };
}

/** A ServiceImport with `total` endpoints spread over `clusters` clusters (10.c.x.y, never dialled). */
export function serviceImportOf(total: number, clusters: number): BackendLayout {
  const perCluster = Math.ceil(total / clusters);
  return {
    kind: 'service-import',
    clusters: Array.from({ length: clusters }, (_, c) => {
      const endpoints: Endpoint[] = [];
      for (let i = 0; i < perCluster && c * perCluster + i < total; i++) {
        endpoints.push({ address: `10.${c}.${(i >> 8) & 255}.${i & 255}`, port: 8080 });
      }
      return { name: `cluster-${c + 1}`, endpoints };
    }),
  };
}

export function heapUsedMiB(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  gc?.();
  return process.memoryUsage().heapUsed / (1024 * 1024);
}

export function hasGc(): boolean {
  return typeof (globalThis as { gc?: unknown }).gc === 'function';
}
