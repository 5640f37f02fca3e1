export { desiredStatus, mergeConditions } from './merge-status.ts';
export { createStatusWriter, type StatusWriter, type StatusWriterOptions } from './status-writer.ts';
