import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DemoProcess, startDemo } from '../browser/demo-process.ts';
import { eventually } from '../support/gateway-process.ts';

/**
 * The README's demo walkthrough, run top to bottom as a newcomer would paste it: every `$ ` line of the
 * `console` blocks under "Try the demo", against `npm start`'s demo (on free ports), each answer compared with
 * the lines the README shows under it. Counts from `uniq -c` are compared with a tolerance (traffic shares are
 * random), `…` stands for anything. A read-only command is repeated until its answer matches, since the README
 * says traffic moves "within seconds"; the deadline only bounds a failing run.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const README = readFileSync(resolve(ROOT, 'README.md'), 'utf8');
const SETTLE_MS = 30_000;

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

const COUNT_LINE = /^\s*(\d+) (.*)$/;

/** Why `actual` is not the answer the README shows, or undefined when it is. */
function mismatch(expected: readonly string[], actual: string): string | undefined {
  const lines = actual.split('\n').filter((line) => line !== '');
  if (expected.length > 0 && expected.every((line) => COUNT_LINE.test(line))) {
    const counts = (rows: readonly string[]) =>
      new Map(rows.map((row) => COUNT_LINE.exec(row)).map((m) => [m?.[2] ?? '', Number(m?.[1])]));
    const want = counts(expected);
    const got = counts(lines);
    const total = [...want.values()].reduce((a, b) => a + b, 0);
    const tolerance = Math.max(10, total * 0.1);
    for (const label of new Set([...want.keys(), ...got.keys()])) {
      if (Math.abs((want.get(label) ?? 0) - (got.get(label) ?? 0)) > tolerance) {
        return `${label}: ${got.get(label) ?? 0} instead of about ${want.get(label) ?? 0}`;
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
  }, 60_000);

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
    // The members' derived imports may reach the table a debounce after readiness: wait for the first answer.
    const served = await eventually(async () => {
      const response = await fetch(`${demo.webUrl}/`);
      if (response.status !== 200) throw new Error(`GET / answered ${response.status}`);
      return response.text();
    }, 30_000);
    expect(JSON.parse(served)).toMatchObject({ zone: 'us-east-1a' });
  });

  it('answers every step as the README shows, in order', async () => {
    for (const step of steps) {
      const command = localised(step.command, demo);
      const changesState = command.includes('-X POST');
      const deadline = Date.now() + (changesState ? 0 : SETTLE_MS);
      let why: string | undefined;
      let output = '';
      for (;;) {
        output = await run(command);
        why = mismatch(step.expected, output);
        if (why === undefined || Date.now() >= deadline) break;
        await new Promise((settle) => setTimeout(settle, 250));
      }
      expect(why, `$ ${step.command}\n${output}`).toBeUndefined();
    }
  }, 240_000);
});

describe('the walkthrough checker', () => {
  it('compares counts with a tolerance and reads … as anything', () => {
    expect(
      mismatch(['    93 "zone": "a"', '      7 "zone": "b"'], '     88 "zone": "a"\n     12 "zone": "b"\n'),
    ).toBe(undefined);
    expect(
      mismatch(['    93 "zone": "a"', '      7 "zone": "b"'], '     70 "zone": "a"\n     30 "zone": "b"\n'),
    ).toMatch(/"zone": "a": 70/);
    expect(mismatch(['pod x-…  ok'], 'pod x-12  ok\n')).toBeUndefined();
    expect(mismatch(['pod x-…  ok'], 'pod y-12  ok\n')).toMatch(/line 1/);
  });
});
