import { isRecord } from '../snapshot/json-object.ts';
import { type FieldError, fieldError, keyPath } from './field-errors.ts';
import { k8sFormatValidate } from './k8s-cel-format.ts';

/**
 * What kube-apiserver checks of every object's ObjectMeta (apimachinery ValidateObjectMeta) before anything else:
 * the name's format for its kind (a Namespace's is an RFC 1123 label, a Service's an RFC 1035 label, every other
 * kind's, custom resources included, an RFC 1123 subdomain), the namespace's, and label and annotation keys and
 * label values. A name the API server would refuse must not become a route or a backend here either.
 */
export function objectMetaErrors(kind: string, metadata: unknown): FieldError[] {
  if (!isRecord(metadata)) return [];
  const errors: FieldError[] = [];
  const check = (format: string, field: string, value: unknown) => {
    if (typeof value !== 'string' || value === '') return;
    const problems = k8sFormatValidate(format, value);
    if (problems) errors.push(fieldError.invalid(field, value, problems.join(', ')));
  };
  check(NAME_FORMAT[kind] ?? 'dns1123Subdomain', 'metadata.name', metadata.name);
  check('dns1123Label', 'metadata.namespace', metadata.namespace);
  if (isRecord(metadata.labels)) {
    for (const [key, value] of Object.entries(metadata.labels)) {
      check('qualifiedName', keyPath('metadata.labels', key), key);
      if (typeof value === 'string' && value !== '')
        check('labelValue', keyPath('metadata.labels', key), value);
    }
  }
  if (isRecord(metadata.annotations)) {
    for (const key of Object.keys(metadata.annotations))
      check('qualifiedName', keyPath('metadata.annotations', key), key);
  }
  return errors;
}

const NAME_FORMAT: Readonly<Record<string, string>> = { Namespace: 'dns1123Label', Service: 'dns1035Label' };
