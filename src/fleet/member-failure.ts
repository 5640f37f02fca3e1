import { KubeApiError } from '../kube/api-client.ts';
import { ExecCredentialError } from '../kube/exec-credential.ts';

/** The API server refused the credentials the request went out with (401), or what they may do (403). */
export function isRefusal(err: unknown): boolean {
  const status =
    typeof err === 'object' && err !== null ? (err as { statusCode?: unknown }).statusCode : undefined;
  return status === 401 || status === 403;
}

/** Why a request to a member failed, in words an operator acts on; never a credential. */
export function describeFailure(err: unknown): string {
  const cause = err instanceof Error && err.cause !== undefined ? err.cause : undefined;
  if (err instanceof ExecCredentialError) return err.message;
  if (cause instanceof ExecCredentialError) return cause.message;
  if (err instanceof KubeApiError) {
    if (err.statusCode === 401) return 'credentials refused (401 Unauthorized)';
    if (err.statusCode === 0) return `unreachable: ${transportMessage(err)}`;
    return `${err.method} ${err.path}: ${err.statusCode} ${err.reason ?? ''}`.trim();
  }
  const status =
    typeof err === 'object' && err !== null ? (err as { statusCode?: unknown }).statusCode : undefined;
  if (status === 401) return 'credentials refused (401 Unauthorized)';
  return `unreachable: ${transportMessage(err)}`;
}

function transportMessage(err: unknown): string {
  // fetch wraps the socket error: the useful words (ECONNREFUSED, certificate problems) are in the cause chain.
  const parts: string[] = [];
  let current: unknown = err;
  for (let depth = 0; depth < 4 && current instanceof Error; depth++) {
    const code = (current as NodeJS.ErrnoException).code;
    const message = current.message.replace(/^(GET|POST|PUT|PATCH|DELETE) \S+: (unreachable|\d+) /, '');
    parts.push(code && !message.includes(code) ? `${code} ${message}` : message);
    current = current.cause;
  }
  const text = parts.length > 0 ? parts[parts.length - 1] : String(err);
  return (text ?? '').replace(/Bearer \S+/g, 'Bearer <redacted>').slice(0, 200);
}
