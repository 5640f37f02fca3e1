import { readFile } from 'node:fs/promises';

/** The parts of a V8 `.cpuprofile` (written by `node --cpu-prof`) that self time needs. */
interface ProfileNode {
  readonly id: number;
  readonly callFrame: {
    readonly functionName: string;
    readonly url: string;
    readonly lineNumber: number;
  };
}

interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

export interface SelfTime {
  readonly name: string;
  readonly where: string;
  readonly area: string;
  readonly ms: number;
}

function isProfile(value: unknown): value is CpuProfile {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return Array.isArray(v.nodes) && Array.isArray(v.samples) && Array.isArray(v.timeDeltas);
}

/** Where a frame's code lives, coarse enough to say "the time goes to undici" or "to our matcher". */
export function areaOf(url: string, name: string): string {
  if (name === '(idle)') return 'idle';
  if (name === '(garbage collector)') return 'gc';
  if (name === '(program)' || name === '(root)') return 'native/V8';
  if (url === '') return 'native/V8';
  if (url.startsWith('node:'))
    return `node:${url.slice(5).split('/')[0] === 'internal' ? url.slice(14).split('/')[0] : url.slice(5)}`;
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (nm?.[1]) return nm[1];
  const src = /\/(src\/[^/]+)\//.exec(url);
  if (src?.[1]) return src[1];
  return url
    .replace(/^file:\/\//, '')
    .split('/')
    .slice(-2)
    .join('/');
}

/**
 * Index of the first sample taken while serving: its leaf is a named function in src/proxy (or its compiled
 * copy in dist/proxy). Module loading
 * and transpiling at startup (tsx) come before it and say nothing about the request path.
 */
export function firstServingSample(profile: CpuProfile): number {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const index = profile.samples.findIndex((id) => {
    const frame = byId.get(id)?.callFrame;
    // `npm run bench` runs the compiled gateway (dist/), the smoke test and tsx runs the sources.
    return frame !== undefined && frame.functionName !== '' && /\/(src|dist)\/proxy\//.test(frame.url);
  });
  return Math.max(index, 0);
}

/** Self time per function (summed over the profile's samples from `from` on), biggest first. */
export function selfTimes(profile: CpuProfile, from = 0): SelfTime[] {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const totals = new Map<string, SelfTime>();
  for (let i = from; i < profile.samples.length; i++) {
    const node = byId.get(profile.samples[i] ?? -1);
    if (!node) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    const name = functionName || '(anonymous)';
    const where = url
      ? `${url.replace(/^file:\/\/.*?\/(src|node_modules|bench)\//, '$1/')}:${lineNumber + 1}`
      : '';
    const key = `${name} ${where}`;
    const deltaMs = (profile.timeDeltas[i] ?? 0) / 1000;
    const current = totals.get(key);
    totals.set(key, { name, where, area: areaOf(url, name), ms: (current?.ms ?? 0) + deltaMs });
  }
  return [...totals.values()].sort((a, b) => b.ms - a.ms);
}

export function summarizeProfile(value: unknown, top = 25): string {
  if (!isProfile(value)) throw new Error('not a V8 .cpuprofile (needs nodes, samples, timeDeltas)');
  const from = firstServingSample(value);
  const startupMs = value.timeDeltas.slice(0, from).reduce((a, d) => a + d, 0) / 1000;
  const times = selfTimes(value, from);
  const total = times.reduce((a, t) => a + t.ms, 0);
  const busy = times.filter((t) => t.area !== 'idle').reduce((a, t) => a + t.ms, 0);
  const pct = (ms: number): string => `${((ms / Math.max(busy, 1e-9)) * 100).toFixed(1)}%`.padStart(6);
  const lines = [
    `profile: ${(total / 1000).toFixed(1)} s sampled from the first request on (${(startupMs / 1000).toFixed(1)} s of startup left out), ${(busy / 1000).toFixed(1)} s busy; percentages are of busy time`,
    '',
    'self time by area:',
  ];
  const areas = new Map<string, number>();
  for (const t of times) if (t.area !== 'idle') areas.set(t.area, (areas.get(t.area) ?? 0) + t.ms);
  for (const [area, ms] of [...areas].sort((a, b) => b[1] - a[1]).slice(0, 15)) {
    lines.push(`  ${pct(ms)}  ${area}`);
  }
  lines.push('', `top ${top} functions by self time:`);
  for (const t of times.filter((t) => t.area !== 'idle').slice(0, top)) {
    lines.push(`  ${pct(t.ms)}  ${t.ms.toFixed(0).padStart(7)} ms  ${t.name}  ${t.where}`);
  }
  return `${lines.join('\n')}\n`;
}

export async function summarizeProfileFile(path: string, top = 25): Promise<string> {
  return summarizeProfile(JSON.parse(await readFile(path, 'utf8')) as unknown, top);
}

/** Busy (non-idle) sampled milliseconds: tells the main thread's profile from a loader thread's. */
export async function profileBusyMs(path: string): Promise<number> {
  const value = JSON.parse(await readFile(path, 'utf8')) as unknown;
  if (!isProfile(value)) return 0;
  return selfTimes(value)
    .filter((t) => t.area !== 'idle')
    .reduce((a, t) => a + t.ms, 0);
}
