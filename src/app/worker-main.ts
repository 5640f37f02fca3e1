import { parseCli } from '../cli/args.ts';
import { tuneHeapForRequests } from './heap-tuning.ts';
import { leanAsyncResourceBind } from './lean-async-bind.ts';
import { loadTracing } from './tracing-setup.ts';
import { runWorker } from './workers.ts';

// Entry point of a data plane worker process (forked by startWorkerPool with the primary's arguments).
tuneHeapForRequests(process.execArgv);
leanAsyncResourceBind();
const cli = parseCli(process.argv.slice(2), process.env);
runWorker(cli, await loadTracing(cli));
