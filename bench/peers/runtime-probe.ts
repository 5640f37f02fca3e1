import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';

/**
 * Preloaded (`node --import`) into every Node process the bench measures, the gateway and its Node peers
 * alike: event-loop delay and GC pauses since the last SIGUSR2, printed as one `CSG_RUNTIME {json}` line on
 * stderr and reset. The bench sends SIGUSR2 before and after each measured run (bench/harness/runtime-meter.ts).
 */
const loop = monitorEventLoopDelay({ resolution: 1 });
loop.enable();
let gcCount = 0;
let gcPauseMs = 0;
let gcMaxPauseMs = 0;

new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    gcCount++;
    gcPauseMs += entry.duration;
    if (entry.duration > gcMaxPauseMs) gcMaxPauseMs = entry.duration;
  }
}).observe({ entryTypes: ['gc'] });

process.on('SIGUSR2', () => {
  const ms = (ns: number): number => ns / 1e6;
  const report = {
    loopP50Ms: ms(loop.percentile(50)),
    loopP99Ms: ms(loop.percentile(99)),
    loopMaxMs: ms(loop.max),
    gcCount,
    gcPauseMs,
    gcMaxPauseMs,
    heapUsedBytes: process.memoryUsage().heapUsed,
  };
  process.stderr.write(`CSG_RUNTIME ${JSON.stringify(report)}\n`);
  loop.reset();
  gcCount = 0;
  gcPauseMs = 0;
  gcMaxPauseMs = 0;
});
