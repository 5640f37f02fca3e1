import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DemoProcess, startDemo } from '../browser/demo-process.ts';

/**
 * The README's demo walkthrough, pasted as a newcomer would paste it, back to back: every `$ ` line of the
 * `console` blocks under "Try the demo", against `npm start`'s demo (on free ports) as soon as it is ready, each
 * command run once, no sleep and no second try, and its answer compared with the lines the README shows under
 * it (issue 42). `…` stands for anything; a `uniq -c` count shown as `84–99` may be anything in that range
 * (traffic shares are drawn at random), one shown as a number must be that number.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const README = readFileSync(resolve(ROOT, 'README.md'), 'utf8');

interface Step {
  readonly command: string;
  readonly expected: readonly string[];
}

function walkthroughSteps(readme: string): Step[] {
  const section = readme.split(/^## Try the demo$/m)[1]?.split(/^## /m)[0] ?? '';
  const steps: Step[] = [];
  for (const block of section.matchAll(/^```console\n([\s\S]*?)^```$/gm)) {
    for (const line of block[1]!.split('\n')) {
      if (line.startsWith('$ ')) steps.push({ command: line.slice(2), expected: [] });
      else if (line !== '') (steps.at(-1)?.expected as string[] | undefined)?.push(line);
    }
  }
  return steps;
}

/** The README speaks of the demo's default ports; the test's demo runs on free ones. */
function localised(command: string, demo: DemoProcess & { readonly eastWestPort: number }): string {
  const web = demo.webUrl.replace('http://', '');
  const admin = demo.adminUrl.replace('http://', '');
  return command
    .replaceAll('localhost:8080', web)
    .replaceAll('localhost:9901', admin)
    .replaceAll('localhost:15080', `127.0.0.1:${demo.eastWestPort}`)
    .replace(/npm run -s demo:grpc( --)?/, `npm run -s demo:grpc -- --url ${demo.webUrl}`);
}

function run(command: string): Promise<string> {
  return new Promise((done, fail) => {
    execFile('sh', ['-c', command], { cwd: ROOT, timeout: 60_000 }, (error, stdout, stderr) => {
      if (error) fail(new Error(`${command}: ${error.message}\n${stderr}`));
      else done(stdout);
    });
  });
}

const COUNT_LINE = /^\s*(\d+)(?:–(\d+))? (.*)$/;

/** Why `actual` is not the answer the README shows, or undefined when it is. */
function mismatch(expected: readonly string[], actual: string): string | undefined {
  const lines = actual.split('\n').filter((line) => line !== '');
  if (expected.length > 0 && expected.every((line) => COUNT_LINE.test(line))) {
    const want = new Map(
      expected
        .map((row) => COUNT_LINE.exec(row))
        .map((m) => [m?.[3] ?? '', [Number(m?.[1]), Number(m?.[2] ?? m?.[1])] as const]),
    );
    const got = new Map(lines.map((row) => COUNT_LINE.exec(row)).map((m) => [m?.[3] ?? '', Number(m?.[1])]));
    for (const label of new Set([...want.keys(), ...got.keys()])) {
      const [low, high] = want.get(label) ?? [0, 0];
      const count = got.get(label) ?? 0;
      if (count < low || count > high) {
        return `${label}: ${count} instead of ${low === high ? low : `${low}–${high}`}`;
      }
    }
    return undefined;
  }
  if (lines.length !== expected.length) return `${lines.length} lines instead of ${expected.length}`;
  for (const [i, line] of expected.entries()) {
    const pattern = new RegExp(`^${line.split('…').map(escapeRegExp).join('.*')}$`);
    if (!pattern.test(lines[i]!)) return `line ${i + 1} is ${JSON.stringify(lines[i])}`;
  }
  return undefined;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

describe("the README's demo walkthrough", () => {
  let demo: DemoProcess & { readonly eastWestPort: number };
  const steps = walkthroughSteps(README);

  beforeAll(async () => {
    demo = await startDemo();
  }, 90_000);

  afterAll(async () => {
    await demo?.stop();
  }, 30_000);

  it('has steps with answers', () => {
    expect(steps.length).toBeGreaterThan(10);
    expect(steps.filter((step) => step.expected.length > 0).length).toBe(steps.length);
  });

  it('changes the demo only on POST, and names a pod, zone or cluster it does not know', async () => {
    const get = await fetch(`${demo.adminUrl}/demo/stop?zone=us-east-1a`);
    expect([get.status, get.headers.get('allow')]).toEqual([405, 'POST']);
    const unknown = await fetch(`${demo.adminUrl}/demo/stop?pod=web-nowhere-1`, { method: 'POST' });
    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toMatch(/^no pod named "web-nowhere-1" in the demo/);
  });

  it('answers every step as the README shows, pasted back to back from the moment it is ready', async () => {
    for (const step of steps) {
      const output = await run(localised(step.command, demo));
      expect(mismatch(step.expected, output), `$ ${step.command}\n${output}`).toBeUndefined();
    }
  }, 240_000);
});

describe('the walkthrough checker', () => {
  it('compares counts with their range, exactly when no range is shown, and reads … as anything', () => {
    const shown = ['  84–99 "zone": "a"', '   1–16 "zone": "b"'];
    expect(mismatch(shown, '     88 "zone": "a"\n     12 "zone": "b"\n')).toBe(undefined);
    expect(mismatch(shown, '     80 "zone": "a"\n     20 "zone": "b"\n')).toMatch(
      /"zone": "a": 80 instead of 84–99/,
    );
    expect(mismatch(shown, '    100 "zone": "a"\n')).toMatch(/"zone": "a": 100 instead of 84–99/);
    expect(mismatch(['    100 "zone": "a"'], '     99 "zone": "a"\n      1 "zone": "b"\n')).toMatch(
      /"zone": "a": 99 instead of 100/,
    );
    expect(mismatch(['pod x-…  ok'], 'pod x-12  ok\n')).toBeUndefined();
    expect(mismatch(['pod x-…  ok'], 'pod y-12  ok\n')).toMatch(/line 1/);
  });
});
