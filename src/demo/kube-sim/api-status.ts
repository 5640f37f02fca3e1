/** `meta/v1 Status` failures, shaped as kube-apiserver sends them (k8s.io/apimachinery/pkg/api/errors). */

export interface StatusCause {
  readonly reason: string;
  readonly message: string;
  readonly field: string;
}

export class ApiFailure extends Error {
  readonly code: number;
  readonly reason: string;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: number, reason: string, message: string, details?: Record<string, unknown>) {
    super(message);
    this.code = code;
    this.reason = reason;
    this.details = details;
  }

  toStatus(): Record<string, unknown> {
    return {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: this.message,
      reason: this.reason,
      ...(this.details ? { details: this.details } : {}),
      code: this.code,
    };
  }
}

export interface Target {
  readonly group: string;
  readonly kind: string;
  readonly resource: string;
  readonly name?: string;
}

function qualified(target: Target): string {
  return target.group ? `${target.resource}.${target.group}` : target.resource;
}

export function notFound(target: Target): ApiFailure {
  return new ApiFailure(404, 'NotFound', `${qualified(target)} "${target.name ?? ''}" not found`, {
    name: target.name,
    group: target.group,
    kind: target.resource,
  });
}

export function alreadyExists(target: Target): ApiFailure {
  return new ApiFailure(409, 'AlreadyExists', `${qualified(target)} "${target.name ?? ''}" already exists`, {
    name: target.name,
    group: target.group,
    kind: target.resource,
  });
}

export function conflict(target: Target): ApiFailure {
  return new ApiFailure(
    409,
    'Conflict',
    `Operation cannot be fulfilled on ${qualified(target)} "${target.name ?? ''}": the object has been modified; please apply your changes to the latest version and try again`,
    { name: target.name, group: target.group, kind: target.resource },
  );
}

export function invalid(target: Target, causes: readonly StatusCause[]): ApiFailure {
  const summary = causes.map((c) => `${c.field}: ${c.message}`).join(', ');
  const list = causes.length > 1 ? `[${summary}]` : summary;
  // errors.NewInvalid names the group-qualified kind: `HTTPRoute.gateway.networking.k8s.io "x" is invalid`.
  const kind = target.group ? `${target.kind}.${target.group}` : target.kind;
  return new ApiFailure(422, 'Invalid', `${kind} "${target.name ?? ''}" is invalid: ${list}`, {
    name: target.name,
    group: target.group,
    kind: target.kind,
    causes,
  });
}

export function badRequest(message: string): ApiFailure {
  return new ApiFailure(400, 'BadRequest', message);
}

export function forbidden(
  user: string,
  verb: string,
  target: Target,
  namespace: string | undefined,
): ApiFailure {
  const scope = namespace ? `in the namespace "${namespace}"` : 'at the cluster scope';
  const named = target.name ? ` "${target.name}"` : '';
  return new ApiFailure(
    403,
    'Forbidden',
    `${qualified(target)}${named} is forbidden: User "${user}" cannot ${verb} resource "${target.resource}" in API group "${target.group}" ${scope}`,
    { name: target.name, group: target.group, kind: target.resource },
  );
}

export function expired(message: string): ApiFailure {
  return new ApiFailure(410, 'Expired', message);
}

export function unsupportedMediaType(_contentType: string, accepted: readonly string[]): ApiFailure {
  return new ApiFailure(
    415,
    'UnsupportedMediaType',
    `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`,
  );
}

export function methodNotAllowed(message: string): ApiFailure {
  return new ApiFailure(405, 'MethodNotAllowed', message);
}

/** A field-level validation error (k8s.io/apimachinery/pkg/util/validation/field). */
export const cause = {
  required: (field: string, detail = ''): StatusCause => ({
    reason: 'FieldValueRequired',
    message: detail ? `Required value: ${detail}` : 'Required value',
    field,
  }),
  invalid: (field: string, value: unknown, detail: string): StatusCause => ({
    reason: 'FieldValueInvalid',
    message: `Invalid value: ${JSON.stringify(value)}: ${detail}`,
    field,
  }),
  notSupported: (field: string, value: unknown, allowed: readonly string[]): StatusCause => ({
    reason: 'FieldValueNotSupported',
    message: `Unsupported value: ${JSON.stringify(value)}: supported values: ${allowed.map((a) => `"${a}"`).join(', ')}`,
    field,
  }),
  duplicate: (field: string, value: unknown): StatusCause => ({
    reason: 'FieldValueDuplicate',
    message: `Duplicate value: ${JSON.stringify(value)}`,
    field,
  }),
  tooMany: (field: string, actual: number, max: number): StatusCause => ({
    reason: 'FieldValueTooMany',
    message: `Too many: ${actual}: must have at most ${max} items`,
    field,
  }),
  typeInvalid: (field: string, value: unknown, type: string): StatusCause => ({
    reason: 'FieldValueTypeInvalid',
    message: `Invalid value: ${JSON.stringify(value)}: ${field.split('.').pop()} in body must be of type ${type}`,
    field,
  }),
  forbidden: (field: string, detail: string): StatusCause => ({
    reason: 'FieldValueForbidden',
    message: `Forbidden: ${detail}`,
    field,
  }),
};
