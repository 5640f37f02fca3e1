/**
 * Reading one flag's text as a checked value; every mistake is a UsageError that names the flag, its bounds and
 * what was given.
 */

export class UsageError extends Error {
  readonly code = 'UsageError';
}

/** `{ key: value }`, or `{}` when the value is absent or empty (an unset downward-API variable arrives as ''). */
export function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined || value === '' ? {} : { [key]: value }) as { [P in K]?: V };
}

export function integer(flag: string, text: string, min: number, max: number): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new UsageError(
      `--${flag} must be an integer between ${min} and ${max}, not ${JSON.stringify(text)}`,
    );
  }
  return value;
}

export function number(flag: string, text: string, min: number, max: number): number {
  const value = Number(text);
  if (!Number.isFinite(value) || value < min || value > max) {
    throw new UsageError(`--${flag} must be a number between ${min} and ${max}, not ${JSON.stringify(text)}`);
  }
  return value;
}

export function parseKinds(text: string | undefined): { group: string; kind: string }[] | undefined {
  if (text === undefined) return undefined;
  return text.split(',').map((entry) => {
    const slash = entry.lastIndexOf('/');
    if (slash <= 0 || slash === entry.length - 1) {
      throw new UsageError(`--service-import-kinds entries are group/Kind, not ${JSON.stringify(entry)}`);
    }
    return { group: entry.slice(0, slash), kind: entry.slice(slash + 1) };
  });
}

const NAMESPACE_NAME = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** `ns1,ns2`: namespace names (RFC 1123 labels), as `--mesh-namespaces` takes them. */
export function parseNamespaces(flag: string, text: string | undefined): string[] | undefined {
  if (text === undefined) return undefined;
  return text.split(',').map((entry) => {
    const name = entry.trim();
    if (!NAMESPACE_NAME.test(name)) {
      throw new UsageError(`--${flag} entries are namespace names, not ${JSON.stringify(entry)}`);
    }
    return name;
  });
}
