/**
 * `--log-format text`: each pino JSON line rewritten for a terminal, as pino-pretty prints it but in-process and
 * without a dependency: `HH:MM:SS.mmm LEVEL msg key=value …`, time in UTC, strings with spaces, quotes or `=`
 * quoted as JSON, objects as compact JSON, an error's stack on the indented lines after it. The default stays
 * pino's JSON, one object a line, for log collectors.
 */
export type LogFormat = 'json' | 'text';

export const LOG_FORMATS: readonly LogFormat[] = ['json', 'text'];

const LEVELS: Readonly<Record<number, string>> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO',
  40: 'WARN',
  50: 'ERROR',
  60: 'FATAL',
};

/** ANSI colours for the level when writing to a terminal (pino-pretty's). */
const COLOURS: Readonly<Record<number, string>> = {
  10: '\x1b[90m',
  20: '\x1b[34m',
  30: '\x1b[32m',
  40: '\x1b[33m',
  50: '\x1b[31m',
  60: '\x1b[41m',
};
const RESET = '\x1b[0m';

/** Fields every line has or that say nothing to an operator reading one process's output. */
const OMITTED = new Set(['level', 'time', 'msg', 'app', 'pid', 'hostname']);

/**
 * One pino JSON line (with its newline) as a text line. Anything that is not a JSON object is passed through
 * as it is: a log line is never lost to its format.
 */
export function textLine(json: string, colour = false): string {
  let record: unknown;
  try {
    record = JSON.parse(json);
  } catch {
    return json;
  }
  if (typeof record !== 'object' || record === null || Array.isArray(record)) return json;
  const fields = record as Record<string, unknown>;
  const level = typeof fields.level === 'number' ? fields.level : 30;
  const name = (LEVELS[level] ?? `L${level}`).padEnd(5);
  const parts = [clock(fields.time), colour ? `${COLOURS[level] ?? ''}${name}${RESET}` : name];
  if (typeof fields.msg === 'string' && fields.msg !== '') parts.push(fields.msg);
  let stack = '';
  for (const [key, value] of Object.entries(fields)) {
    if (OMITTED.has(key) || value === undefined) continue;
    if (isError(value)) {
      parts.push(`${key}=${quoted(value.message)}`);
      const frames = value.stack.split('\n').slice(1);
      if (frames.length > 0) stack += `\n    ${frames.map((f) => f.trim()).join('\n    ')}`;
      continue;
    }
    parts.push(`${key}=${valueText(value)}`);
  }
  return `${parts.join(' ')}${stack}\n`;
}

function clock(time: unknown): string {
  if (typeof time !== 'number') return '--:--:--.---';
  return new Date(time).toISOString().slice(11, 23);
}

function valueText(value: unknown): string {
  if (typeof value === 'string') return quoted(value);
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  return JSON.stringify(value);
}

/** Bare when it reads unambiguously after `key=`, else as a JSON string. */
function quoted(text: string): string {
  return text !== '' && /^[^\s"=\\]+$/.test(text) ? text : JSON.stringify(text);
}

/** pino's serialized error: `{ type, message, stack }`. */
function isError(value: unknown): value is { message: string; stack: string } {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { message?: unknown }).message === 'string' &&
    typeof (value as { stack?: unknown }).stack === 'string'
  );
}

/**
 * The pino options for `format`: text rewrites each line just before it is written (pino's `streamWrite`
 * hook), so levels, serializers and destinations stay pino's. Colour only on a terminal, never with NO_COLOR.
 */
export function logFormatOptions(
  format: LogFormat,
  output: { readonly isTTY?: boolean } = process.stdout,
  env: NodeJS.ProcessEnv = process.env,
): { hooks?: { streamWrite: (line: string) => string } } {
  if (format === 'json') return {};
  const colour = output.isTTY === true && env.NO_COLOR === undefined;
  return { hooks: { streamWrite: (line) => textLine(line, colour) } };
}
