import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { logFormatOptions, textLine } from '../../src/log/text-format.ts';

/** Lines a pino logger with `--log-format`'s options writes, as the process would write them to stdout. */
function logged(format: 'json' | 'text', write: (logger: pino.Logger) => void, tty = false): string[] {
  const lines: string[] = [];
  const out = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  const logger = pino(
    {
      level: 'debug',
      base: { app: 'clusterset-gateway' },
      ...logFormatOptions(format, { isTTY: tty }, {}),
    },
    out,
  );
  write(logger);
  return lines;
}

const TIME = Date.UTC(2026, 11, 6, 3, 12, 45, 123);

describe('--log-format text', () => {
  it('writes time, level, message, then key=value', () => {
    const line = textLine(
      `${JSON.stringify({ level: 30, time: TIME, app: 'clusterset-gateway', component: 'reconciler', object: 'Gateway/shop/edge', generation: 2, msg: 'status changed' })}\n`,
    );
    expect(line).toBe(
      '03:12:45.123 INFO  status changed component=reconciler object=Gateway/shop/edge generation=2\n',
    );
  });

  it('quotes values with spaces, quotes or =; objects as compact JSON; booleans and null as they are', () => {
    const line = textLine(
      JSON.stringify({
        level: 40,
        time: TIME,
        msg: 'listener not bound',
        reason: 'listen EADDRINUSE: address already in use',
        expr: 'a=b',
        empty: '',
        ports: [8080, 8443],
        tls: false,
        zone: null,
      }),
    );
    expect(line).toBe(
      '03:12:45.123 WARN  listener not bound reason="listen EADDRINUSE: address already in use" expr="a=b" empty="" ports=[8080,8443] tls=false zone=null\n',
    );
  });

  it('prints an error by its message, its stack on the indented lines below', () => {
    const [line] = logged('text', (logger) => logger.error({ err: new Error('boom') }, 'apply failed'));
    const [head, ...stack] = line!.trimEnd().split('\n');
    expect(head).toMatch(/^\d\d:\d\d:\d\d\.\d{3} ERROR apply failed err=boom$/);
    expect(stack.length).toBeGreaterThan(0);
    for (const frame of stack) expect(frame).toMatch(/^ {4}at /);
  });

  it('through pino: every level, one line each, nothing of pid/hostname/app', () => {
    const lines = logged('text', (logger) => {
      logger.debug('d');
      logger.info({ port: 8080 }, 'listening');
      logger.warn('w');
    });
    expect(lines.map((l) => l.slice(13))).toEqual(['DEBUG d\n', 'INFO  listening port=8080\n', 'WARN  w\n']);
  });

  it('colours the level only on a terminal', () => {
    const [plain] = logged('text', (logger) => logger.warn('w'));
    const [coloured] = logged('text', (logger) => logger.warn('w'), true);
    expect(plain).not.toContain('\x1b[');
    expect(coloured).toContain('\x1b[33mWARN \x1b[0m w');
    expect(
      logFormatOptions('text', { isTTY: true }, { NO_COLOR: '1' }).hooks?.streamWrite('{"level":40}'),
    ).not.toContain('\x1b[');
  });

  it('json stays pino JSON, untouched', () => {
    const [line] = logged('json', (logger) => logger.info({ port: 8080 }, 'listening'));
    expect(JSON.parse(line!)).toMatchObject({
      level: 30,
      app: 'clusterset-gateway',
      port: 8080,
      msg: 'listening',
    });
  });

  it('passes a line that is not a JSON object through as it is', () => {
    expect(textLine('not json\n')).toBe('not json\n');
    expect(textLine('[1,2]\n')).toBe('[1,2]\n');
  });
});
