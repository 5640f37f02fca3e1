import { isRecord } from '../snapshot/json-object.ts';
/**
 * One short line's worth of an object's status, for the "status changed" log line: conditions as
 * `Type=Status`, with the reason and message only where the reason is not the type's own name (the default,
 * healthy reasons say nothing the type does not); listeners and parents by name with their conditions; long
 * lists (a GatewayClass's ~45 supported features) as a count. The whole status is in the line at debug level
 * and in the object itself.
 */
export function statusSummary(status: unknown): Record<string, string | number> {
  const summary: Record<string, string | number> = {};
  if (!isRecord(status)) return summary;
  for (const [key, value] of Object.entries(status)) {
    const brief = briefOf(value);
    if (brief !== undefined) summary[key] = brief;
  }
  return summary;
}

/** Lists longer than this are logged as their length. */
const LIST_LIMIT = 4;
/** A condition message is cut to this many characters. */
const MESSAGE_LIMIT = 160;

function briefOf(value: unknown): string | number | undefined {
  if (typeof value === 'string' || typeof value === 'number') return value;
  if (typeof value === 'boolean') return String(value);
  if (!Array.isArray(value)) return isRecord(value) ? JSON.stringify(value) : undefined;
  if (value.length === 0) return undefined;
  if (value.every(isCondition)) return value.map(conditionText).join(' ');
  if (value.every((item) => isRecord(item) && Array.isArray(item.conditions)))
    return value.map(labelledConditions).join('; ');
  if (value.every((item) => typeof item === 'string' || typeof item === 'number')) return value.join(',');
  if (value.every((item) => isRecord(item) && typeof item.value === 'string'))
    return value.map((item) => (item as { value: string }).value).join(',');
  if (value.length > LIST_LIMIT) return value.length;
  if (value.every((item) => isRecord(item) && typeof item.name === 'string'))
    return value.map((item) => namedText(item as Record<string, unknown>)).join('; ');
  return JSON.stringify(value);
}

/** `local: east-1,east-2` for a ClusterSelectionPolicy tier: the name, then its other fields in brief. */
function namedText(item: Record<string, unknown>): string {
  const rest = Object.entries(item)
    .filter(([key]) => key !== 'name')
    .map(([, value]) => briefOf(value))
    .filter((brief) => brief !== undefined);
  return rest.length > 0 ? `${String(item.name)}: ${rest.join(' ')}` : String(item.name);
}

interface Condition {
  readonly type: string;
  readonly status: string;
  readonly reason?: string;
  readonly message?: string;
}

function isCondition(value: unknown): value is Condition {
  return isRecord(value) && typeof value.type === 'string' && typeof value.status === 'string';
}

function conditionText(condition: Condition): string {
  const head = `${condition.type}=${condition.status}`;
  if (condition.reason === undefined || condition.reason === condition.type) return head;
  const message = condition.message ?? '';
  const cut = message.length > MESSAGE_LIMIT ? `${message.slice(0, MESSAGE_LIMIT)}…` : message;
  return `${head} (${condition.reason}${cut ? `: ${cut}` : ''})`;
}

/** `http: Accepted=True … attachedRoutes=4` for a listener; `Gateway demo#http: …` for a route's parent. */
function labelledConditions(item: unknown): string {
  const record = item as Record<string, unknown> & { conditions: unknown[] };
  const conditions = record.conditions.filter(isCondition).map(conditionText).join(' ');
  const routes = typeof record.attachedRoutes === 'number' ? ` attachedRoutes=${record.attachedRoutes}` : '';
  return `${labelOf(record)}: ${conditions}${routes}`;
}

function labelOf(record: Record<string, unknown>): string {
  if (typeof record.name === 'string') return record.name;
  const ref = record.parentRef;
  if (!isRecord(ref)) return '?';
  const namespace = typeof ref.namespace === 'string' ? `${ref.namespace}/` : '';
  const section = typeof ref.sectionName === 'string' ? `#${ref.sectionName}` : '';
  const port = typeof ref.port === 'number' ? `:${ref.port}` : '';
  return `${String(ref.kind ?? 'Gateway')} ${namespace}${String(ref.name)}${section}${port}`;
}
