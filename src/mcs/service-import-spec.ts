import type { ServiceImport, ServiceImportPort, ServiceImportSpec } from '../snapshot/resources.ts';

/**
 * The fields of a ServiceImport we read. MCS API v0.5.0 keeps them under `spec` in both v1alpha1 and v1beta1,
 * and sources fold any top-level copies into `spec`; an object that skipped the sources (a test, a future
 * version with top-level fields) is still read: `spec` first, then the top level.
 */
export function serviceImportSpec(serviceImport: ServiceImport): ServiceImportSpec {
  const spec = serviceImport.spec ?? {};
  const top: Readonly<Record<string, unknown>> = { ...serviceImport };
  const ports = spec.ports ?? portsFrom(top['ports']);
  const trafficDistribution =
    spec.trafficDistribution ??
    (typeof top['trafficDistribution'] === 'string' ? top['trafficDistribution'] : undefined);
  return {
    ...spec,
    ...(ports ? { ports } : {}),
    ...(trafficDistribution !== undefined ? { trafficDistribution } : {}),
  };
}

function portsFrom(value: unknown): readonly ServiceImportPort[] | undefined {
  if (!Array.isArray(value)) return undefined;
  const ports: ServiceImportPort[] = [];
  for (const item of value as unknown[]) {
    if (typeof item !== 'object' || item === null) continue;
    const { port, name, protocol, appProtocol } = item as Record<string, unknown>;
    if (typeof port !== 'number') continue;
    ports.push({
      port,
      ...(typeof name === 'string' ? { name } : {}),
      ...(typeof protocol === 'string' ? { protocol } : {}),
      ...(typeof appProtocol === 'string' ? { appProtocol } : {}),
    });
  }
  return ports;
}
