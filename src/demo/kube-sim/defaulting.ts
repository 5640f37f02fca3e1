import { isRecord } from '../../snapshot/json-object.ts';
import { cause, invalid } from './api-status.ts';
import { type JsonObject, metadataOf } from './json.ts';
import { type ResourceDef, resourceTarget } from './resources.ts';

/** Built-in defaulting and normalisation the real server applies before validation. */
export function prepare(
  def: ResourceDef,
  obj: JsonObject,
  old: JsonObject | undefined,
  store: { allocateClusterIP(): string },
): void {
  if (def.kind === 'Secret') {
    if (isRecord(obj.stringData)) {
      const data: JsonObject = isRecord(obj.data) ? { ...obj.data } : {};
      for (const [key, value] of Object.entries(obj.stringData)) {
        data[key] = Buffer.from(String(value), 'utf8').toString('base64');
      }
      obj.data = data;
      delete obj.stringData;
    }
    obj.type ??= 'Opaque';
    if (old && old.type !== obj.type) {
      throw invalid(resourceTarget(def, String(metadataOf(obj).name)), [
        cause.invalid('type', obj.type, 'field is immutable'),
      ]);
    }
  }
  if (def.kind === 'Service') {
    const spec: JsonObject = isRecord(obj.spec) ? obj.spec : {};
    obj.spec = spec;
    spec.type ??= 'ClusterIP';
    const oldSpec = old && isRecord(old.spec) ? old.spec : undefined;
    if (spec.type !== 'ExternalName') {
      if (spec.clusterIP === undefined || spec.clusterIP === '') {
        spec.clusterIP = oldSpec?.clusterIP ?? store.allocateClusterIP();
      } else if (oldSpec && oldSpec.clusterIP !== spec.clusterIP) {
        throw invalid(resourceTarget(def, String(metadataOf(obj).name)), [
          cause.invalid('spec.clusterIP', spec.clusterIP, 'field is immutable'),
        ]);
      }
      spec.clusterIPs = [spec.clusterIP];
      spec.ipFamilies ??= ['IPv4'];
      spec.ipFamilyPolicy ??= 'SingleStack';
      spec.internalTrafficPolicy ??= 'Cluster';
    }
    spec.sessionAffinity ??= 'None';
    if (Array.isArray(spec.ports)) {
      for (const port of spec.ports) {
        if (!isRecord(port)) continue;
        port.protocol ??= 'TCP';
        port.targetPort ??= port.port;
      }
    }
  }
  if (def.kind === 'EndpointSlice' && Array.isArray(obj.ports)) {
    for (const port of obj.ports) if (isRecord(port)) port.protocol ??= 'TCP';
  }
}
