import { isRecord } from '../snapshot/json-object.ts';
import { type FieldError, fieldError, keyPath } from './field-errors.ts';
import { isBase64 } from './formats.ts';

/**
 * Values of built-in kinds the gateway reads that kube-apiserver would refuse to decode: Secret `data` and
 * ConfigMap `binaryData` are base64 (Go's standard encoding; line breaks are skipped), `stringData` and ConfigMap
 * `data` are strings, and every key is a valid config key. Without this a number in `data` silently lost the whole
 * map when `stringData` was also given, and a base64 typo became a certificate no one could read.
 */
export function builtInValueErrors(kind: string, object: Record<string, unknown>): FieldError[] {
  const errors: FieldError[] = [];
  const map = (field: string, base64: boolean) => {
    const value = object[field];
    if (value === undefined || value === null) return;
    if (!isRecord(value)) {
      errors.push(fieldError.invalid(field, value, 'must be a map of keys to strings'));
      return;
    }
    for (const [key, item] of Object.entries(value)) {
      const path = keyPath(field, key);
      if (!CONFIG_KEY.test(key) || key === '.' || key === '..' || key.length > 253)
        errors.push(
          fieldError.invalid(
            path,
            key,
            "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (and be no more than 253 characters)",
          ),
        );
      if (typeof item !== 'string')
        errors.push(
          fieldError.invalid(
            path,
            item === null ? 'null' : typeof item,
            base64 ? 'must be a base64 string' : 'must be a string',
          ),
        );
      else if (base64 && !isBase64(item.replace(/[\r\n]/g, '')))
        errors.push(fieldError.invalid(path, '(not shown)', 'illegal base64 data'));
    }
  };
  if (kind === 'Secret') {
    map('data', true);
    map('stringData', false);
  } else if (kind === 'ConfigMap') {
    map('data', false);
    map('binaryData', true);
  }
  return errors;
}

const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;
