import type { Logger } from 'pino';
import { loadCrds } from '../../validation/crd-loader.ts';
import { CrdValidator } from '../../validation/index.ts';

let shared: CrdValidator | undefined;

/**
 * The validator the file source checks objects with: the CRDs in deploy/crds, compiled once per process.
 * undefined (with an error logged) when they cannot be read, so the problem is visible and nothing crashes.
 */
export function defaultFileValidator(logger: Logger): CrdValidator | undefined {
  if (shared) return shared;
  try {
    shared = new CrdValidator(loadCrds());
    for (const p of shared.ruleProblems) {
      logger.error({ location: p.location, rule: p.rule }, `CEL rule cannot be evaluated: ${p.error}`);
    }
  } catch (error) {
    logger.error({ err: error }, 'cannot load the CRDs: objects read from files are not validated');
  }
  return shared;
}
