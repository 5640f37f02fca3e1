import type { Logger } from 'pino';
import { crdChannelEntries } from '../../validation/crd-loader.ts';
import { CrdValidator } from '../../validation/index.ts';

let shared: CrdValidator | undefined;

/**
 * The validator the file source checks objects with: the CRDs in deploy/crds with the Gateway API experimental
 * channel (deploy/crds-experimental), each kind compiled once per process, when the first object of it is read.
 * The experimental channel is a superset of the standard one, and without it the fields only it has (HTTPRoute
 * `retry`) would be pruned from every file.
 * undefined (with an error logged) when they cannot be read, so the problem is visible and nothing crashes.
 */
export function defaultFileValidator(logger: Logger): CrdValidator | undefined {
  if (shared) return shared;
  try {
    shared = new CrdValidator(crdChannelEntries('experimental'), {
      // The file source's backends are commonly processes on this machine (tests, local runs, the yardstick).
      allowLoopbackEndpoints: true,
      onRuleProblems: (problems) => {
        for (const p of problems) {
          logger.error({ location: p.location, rule: p.rule }, `CEL rule cannot be evaluated: ${p.error}`);
        }
      },
    });
  } catch (error) {
    logger.error({ err: error }, 'cannot load the CRDs: objects read from files are not validated');
  }
  return shared;
}
