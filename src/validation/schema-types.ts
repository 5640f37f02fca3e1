/** The parts of a CRD's structural `openAPIV3Schema` (apiextensions.k8s.io/v1 JSONSchemaProps) this validator reads. */
export interface ValidationRule {
  readonly rule: string;
  readonly message?: string;
  readonly messageExpression?: string;
  readonly reason?: string;
  readonly fieldPath?: string;
  readonly optionalOldSelf?: boolean;
}

export interface JsonSchema {
  readonly type?: string;
  readonly format?: string;
  readonly enum?: readonly unknown[];
  readonly pattern?: string;
  readonly maxLength?: number;
  readonly minLength?: number;
  readonly maximum?: number;
  readonly minimum?: number;
  readonly exclusiveMaximum?: boolean;
  readonly exclusiveMinimum?: boolean;
  readonly multipleOf?: number;
  readonly maxItems?: number;
  readonly minItems?: number;
  readonly maxProperties?: number;
  readonly minProperties?: number;
  readonly required?: readonly string[];
  readonly properties?: Readonly<Record<string, JsonSchema>>;
  readonly additionalProperties?: JsonSchema | boolean;
  readonly items?: JsonSchema;
  readonly nullable?: boolean;
  readonly default?: unknown;
  readonly anyOf?: readonly JsonSchema[];
  readonly oneOf?: readonly JsonSchema[];
  readonly allOf?: readonly JsonSchema[];
  readonly not?: JsonSchema;
  readonly 'x-kubernetes-int-or-string'?: boolean;
  readonly 'x-kubernetes-preserve-unknown-fields'?: boolean;
  readonly 'x-kubernetes-embedded-resource'?: boolean;
  readonly 'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  readonly 'x-kubernetes-list-map-keys'?: readonly string[];
  readonly 'x-kubernetes-map-type'?: 'atomic' | 'granular';
  readonly 'x-kubernetes-validations'?: readonly ValidationRule[];
}

/** A CustomResourceDefinition as read from YAML, reduced to what validation needs. */
export interface CrdDocument {
  readonly metadata?: { readonly name?: string };
  readonly spec: {
    readonly group: string;
    readonly names: { readonly kind: string; readonly plural: string };
    readonly scope: 'Namespaced' | 'Cluster';
    readonly versions: readonly {
      readonly name: string;
      readonly served?: boolean;
      readonly storage?: boolean;
      readonly schema?: { readonly openAPIV3Schema?: JsonSchema };
    }[];
  };
}

export type JsonValue = unknown;
export type JsonObject = Record<string, unknown>;

/** The JSON type name kube-openapi reports for a value. */
export function jsonTypeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}
