/**
 * A metric's identity as Prometheus shows it: name, help and label names. The metrics of every layer are
 * defined in src/metrics (this folder), so they can be read, and kept consistent, in one place; each layer
 * then creates or binds them where it counts (README "Metrics" and deploy/monitoring use the names).
 */
export interface MetricDefinition<L extends string = string> {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly L[];
}
