import type { Logger } from 'pino';
import { type Gauge, Registry } from 'prom-client';
import { invalidObjectsGauge, MANIFEST_PROBLEMS } from '../../metrics/source-metrics.ts';
import { BadInputReporter } from '../../net/bad-input.ts';
import type { ManifestProblem } from './manifest-parser.ts';

/**
 * Where a reload's problems go: the whole list of problems in the folder now, and how many objects were refused
 * (undefined: not known, the folder could not be listed).
 */
export interface ManifestProblemSink {
  report(problems: readonly ManifestProblem[], invalidObjects: number | undefined): void;
}

/**
 * The file source's problems as a user reads them: each problem logged and counted
 * (clusterset_gateway_manifest_problems_total) when it is first seen, the refused objects as a gauge
 * (clusterset_gateway_invalid_objects), the list kept for /config_dump. Apart from the reading so that the
 * process that serves keeps it when the folder is read on a thread of its own (app/file-source-thread.ts).
 */
export class ManifestProblemLog implements ManifestProblemSink {
  readonly #logger: Logger;
  readonly #counter: BadInputReporter;
  readonly #invalidGauge: Gauge | undefined;
  #problems: readonly ManifestProblem[] = [];

  /** `registry` undefined: counted in a registry of its own (nothing exported). */
  constructor(logger: Logger, registry: Registry | undefined) {
    this.#logger = logger;
    this.#counter = new BadInputReporter(registry ?? new Registry(), logger, MANIFEST_PROBLEMS);
    this.#invalidGauge = registry ? invalidObjectsGauge(registry) : undefined;
  }

  get problems(): readonly ManifestProblem[] {
    return this.#problems;
  }

  report(problems: readonly ManifestProblem[], invalidObjects: number | undefined): void {
    if (invalidObjects !== undefined) this.#invalidGauge?.set(invalidObjects);
    const before = new Set(this.#problems.map(formatProblem));
    for (const problem of problems) {
      if (!before.has(formatProblem(problem))) {
        this.#counter.count('manifest');
        const fields = { file: problem.file, line: problem.line };
        if (problem.warning) this.#logger.warn(fields, `manifest warning: ${formatProblem(problem)}`);
        else this.#logger.error(fields, `manifest problem: ${formatProblem(problem)}`);
      }
    }
    if (problems.length === 0 && this.#problems.length > 0) this.#logger.info('manifest problems resolved');
    this.#problems = problems;
  }
}

export function formatProblem(problem: ManifestProblem): string {
  return problem.line > 0
    ? `${problem.file}:${problem.line}: ${problem.message}`
    : `${problem.file}: ${problem.message}`;
}
