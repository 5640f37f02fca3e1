import { parseCli } from '../cli/args.ts';
import { nodeFlags, tuneHeapForRequests } from './heap-tuning.ts';
import { runWorker } from './workers.ts';

// Entry point of a data plane worker process (forked by startWorkerPool with the primary's arguments).
tuneHeapForRequests(nodeFlags(process.execArgv, process.env.NODE_OPTIONS));
runWorker(parseCli(process.argv.slice(2), process.env));
