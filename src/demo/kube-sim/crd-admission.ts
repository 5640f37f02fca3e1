import { loadCrds } from '../../validation/crd-loader.ts';
import { CrdValidator } from '../../validation/index.ts';
import type { StatusCause } from './api-status.ts';
import type { JsonObject } from './json.ts';

let shared: CrdValidator | undefined;

/** One validator for every test server in the process: deploy/crds compiled once, strictly. */
function validator(): CrdValidator {
  shared ??= new CrdValidator(loadCrds(), { strict: true });
  return shared;
}

/**
 * What apiextensions-apiserver does to a custom resource on create and update (the status subresource
 * included): prune unknown fields, apply schema defaults, validate the OpenAPI schema and CEL rules. The
 * pruned, defaulted object replaces `obj`'s content (metadata is the store's business); the causes are those
 * of a 422.
 */
export function admitCustomResource(obj: JsonObject, old?: JsonObject): StatusCause[] {
  const typed =
    obj.apiVersion === undefined && old ? { ...obj, apiVersion: old.apiVersion, kind: old.kind } : obj;
  const result = validator().validate(typed, old);
  if (result.errors.length > 0) return [...result.errors];
  for (const key of Object.keys(obj)) if (key !== 'metadata') delete obj[key];
  for (const [key, value] of Object.entries(result.object)) {
    if (key !== 'metadata' && (typed === obj || (key !== 'apiVersion' && key !== 'kind'))) obj[key] = value;
  }
  return [];
}

/**
 * The fields strict decoding reports as unknown for any object (metadata included, built-in kinds by their Go
 * structs, custom resources by their schemas): `unknown field "<path>"` under fieldValidation=Strict or Warn.
 */
export function unknownFields(obj: JsonObject): readonly string[] {
  return validator().validate(obj).unknownFields;
}
