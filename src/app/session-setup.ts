import { readFileSync } from 'node:fs';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { SessionMetrics } from '../metrics/session-metrics.ts';
import type { SessionServices } from '../proxy/exchange/session-persistence.ts';
import {
  generatedSessionSecret,
  parseSessionKeyFile,
  SessionTokens,
} from '../proxy/exchange/session-token.ts';

/**
 * Session persistence's keys and counters (docs/sessions.md). With `--session-key-file`, its keys: values survive
 * restarts and are honoured by every replica given the same file. Without it, a key generated now, and said so
 * in the log: every restart, and every other replica, then gives the sessions a fresh pick. `--workers` share one
 * generated key (`shared`, from the primary), since a client's next connection may land on any of them. Never
 * logs a key.
 */
export function setupSessions(
  keyFile: string | undefined,
  registry: Registry,
  logger: Logger,
  shared?: Buffer,
): SessionServices {
  let secrets: Buffer[];
  if (keyFile !== undefined) {
    secrets = parseSessionKeyFile(readFileSync(keyFile, 'utf8'), keyFile);
    logger.info({ file: keyFile, keys: secrets.length }, 'session persistence keys loaded');
  } else if (shared !== undefined) {
    secrets = [shared];
    logger.info(
      'session persistence key generated at start by the primary, shared by its workers (no --session-key-file): session values survive no restart and no other replica',
    );
  } else {
    secrets = [generatedSessionSecret()];
    logger.info(
      'session persistence key generated at start (no --session-key-file): session values survive no restart and no other replica',
    );
  }
  const metrics = new SessionMetrics(registry);
  const pins = {
    kept: metrics.pins.labels('kept'),
    'moved-endpoint': metrics.pins.labels('moved-endpoint'),
    'moved-cluster': metrics.pins.labels('moved-cluster'),
    new: metrics.pins.labels('new'),
  };
  return {
    tokens: new SessionTokens(secrets),
    counted: (outcome) => pins[outcome].inc(),
    ignored: (reason) => metrics.ignored.labels(reason).inc(),
  };
}

/** The key a `--workers` primary generates once and hands every worker (their `shared`). */
export function workersSessionSecret(): Buffer {
  return generatedSessionSecret();
}
