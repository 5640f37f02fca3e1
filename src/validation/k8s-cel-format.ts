/**
 * The Kubernetes CEL format library (k8s.io/apiserver/pkg/cel/library/format.go): `format.<name>()` names a
 * validator and `.validate(s)` returns the list of what is wrong with `s`, or nothing when it is valid. Upstream
 * returns an optional; here "nothing" is null, which is what the shipped rules compare with
 * (`format.dns1123Label().validate(self) == null`). cel-js has no namespaced objects, so cel-rewrite.ts turns
 * `format.<name>().validate(` into `k8sFormatValidate('<name>', `; an unknown name is left alone and fails to compile.
 */

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const QUALIFIED_NAME_PART = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

type FormatCheck = (value: string) => string[];

function lengthAndPattern(max: number, pattern: RegExp, what: string): FormatCheck {
  return (value) => {
    const errors: string[] = [];
    if (value.length > max) errors.push(`must be no more than ${max} characters`);
    if (!pattern.test(value)) errors.push(what);
    return errors;
  };
}

function qualifiedName(value: string): string[] {
  const slash = value.indexOf('/');
  const name = slash < 0 ? value : value.slice(slash + 1);
  const errors: string[] = [];
  if (slash >= 0) {
    const prefix = value.slice(0, slash);
    if (prefix.length === 0) errors.push('prefix part must be non-empty');
    else errors.push(...FORMATS.dns1123Subdomain!(prefix).map((e) => `prefix part ${e}`));
  }
  if (name.length === 0) errors.push('name part must be non-empty');
  else if (name.length > 63) errors.push('name part must be no more than 63 characters');
  if (name.length > 0 && !QUALIFIED_NAME_PART.test(name)) {
    errors.push(
      "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
    );
  }
  return errors;
}

const FORMATS: Readonly<Record<string, FormatCheck>> = {
  dns1123Label: lengthAndPattern(
    63,
    DNS1123_LABEL,
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
  ),
  dns1123Subdomain: lengthAndPattern(
    253,
    DNS1123_SUBDOMAIN,
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
  ),
  dns1035Label: lengthAndPattern(
    63,
    DNS1035_LABEL,
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
  ),
  labelValue: lengthAndPattern(
    63,
    LABEL_VALUE,
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
  ),
  qualifiedName,
  uuid: (value) => (UUID.test(value) ? [] : ['does not match the UUID format']),
};

/** The names `format.<name>()` may use. */
export const FORMAT_NAMES: ReadonlySet<string> = new Set(Object.keys(FORMATS));

/** `format.<name>().validate(value)`: null when valid, else the list of errors. */
export function k8sFormatValidate(name: string, value: string): string[] | null {
  const check = FORMATS[name];
  if (check === undefined) throw new Error(`unknown format ${name}`);
  const errors = check(value);
  return errors.length === 0 ? null : errors;
}
