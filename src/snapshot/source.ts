import type { Snapshot } from './snapshot.ts';

/**
 * Where objects come from: a folder of YAML, a Kubernetes API server, or the built-in demo.
 * A source calls `onSnapshot` with a complete, immutable Snapshot after its initial load and after every
 * (debounced) change; it never calls it with a partial view.
 */
export interface Source {
  readonly name: string;
  start(onSnapshot: (snapshot: Snapshot) => void): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A config or I/O failure with a stable code: what went wrong outside the program (a missing folder, a refused
 * API server), which a caller reports or retries by code, unlike a bug, which is thrown as it is.
 */
export class SourceError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SourceError';
    this.code = code;
  }
}
