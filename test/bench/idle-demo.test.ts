import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseBenchArgs } from '../../bench/harness/cli-args.ts';
import { startScriptFlags } from '../../bench/harness/idle-demo.ts';
import type { SuiteResult } from '../../bench/harness/results.ts';
import { markdownReport } from '../../bench/report/markdown.ts';

describe('the idle demo measure (--idle-demo)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'idle-demo-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const withStart = (start: string): string => {
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ scripts: { start } }));
    return dir;
  };

  it('runs the Node flags of the checkout’s own npm start', () => {
    expect(
      startScriptFlags(withStart('node --max-semi-space-size=8 --optimize-for-size dist/main.js')),
    ).toEqual(['--max-semi-space-size=8', '--optimize-for-size']);
    expect(startScriptFlags(withStart('node dist/main.js'))).toEqual([]);
    expect(startScriptFlags(withStart('exec node --max-semi-space-size=8 dist/main.js'))).toEqual([
      '--max-semi-space-size=8',
    ]);
    expect(() => startScriptFlags(withStart('tsx src/main.ts'))).toThrow(/npm start is not/);
  });

  it('is off unless asked for', () => {
    expect(parseBenchArgs([]).idleDemo).toBe(false);
    expect(parseBenchArgs(['--idle-demo']).idleDemo).toBe(true);
  });

  it('writes a row per build into latest.md, every run and the largest figure', () => {
    const result = {
      machine: { cpuModel: 'cpu', cores: 2, node: 'v20', os: 'linux', tools: {}, loadAverage1m: 0 },
      finishedAt: '2026-12-05T00:00:00Z',
      cpuPlan: 'plan',
      backend: 'backend',
      options: { runs: 2, durationSec: 1, warmupSec: 1, tools: [] },
      notes: [],
      scenarios: [],
      idleDemo: {
        samplesAtSec: [20, 40],
        builds: [
          {
            name: 'clusterset-gateway',
            command: 'node --optimize-for-size dist/main.js',
            runs: [
              { gatewayMiB: [67.5, 68], worldMiB: 80 },
              { gatewayMiB: [69.25, 68.5], worldMiB: 81 },
            ],
          },
          { name: 'abc1234', command: 'node dist/main.js', runs: [], failure: 'exited with code 1' },
        ],
      },
    } as unknown as SuiteResult;
    const markdown = markdownReport(result);
    expect(markdown).toContain('### Idle demo (`npm start`, no traffic)');
    expect(markdown).toContain(
      '| clusterset-gateway | `node --optimize-for-size dist/main.js` | 67.5 / 68.0; 69.3 / 68.5 | 69.3 | 81.0 |',
    );
    expect(markdown).toContain('| abc1234 | `node dist/main.js` | failed: exited with code 1 | | |');
  });
});
