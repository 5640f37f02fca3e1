export {
  CrdValidator,
  invalidMessage,
  type ValidationResult,
  type ValidatorOptions,
} from './crd-validator.ts';
export type { FieldError, FieldErrorReason } from './field-errors.ts';
export type { CrdDocument, JsonSchema, ValidationRule } from './schema-types.ts';
