import { parseArgs } from 'node:util';
import type { ConfigKind } from './configs.ts';
import type { LoadTool } from './load.ts';
import { PEERS, SCENARIOS } from './scenarios.ts';
import { OPT_IN_CONFIG_IDS } from './traced-configs.ts';

export interface BenchArgs {
  readonly quick: boolean;
  readonly scenarios: readonly string[];
  /** Config kinds and opt-in config ids (`gateway-traced`). */
  readonly configs: readonly string[];
  readonly tools: readonly LoadTool[] | undefined;
  readonly durationSec: number;
  readonly runs: number;
  readonly warmupSec: number;
  readonly install: boolean;
  readonly nodeBackend: boolean;
  readonly cpuProf: boolean;
  /** Another build of the gateway (its compiled main.js), measured beside this one. */
  readonly baseline: string | undefined;
  /** Node flags before the gateway's main.js; undefined: those `npm start` uses. */
  readonly nodeFlags: readonly string[] | undefined;
  /** Node flags before the baseline's main.js; undefined: the same as the gateway's. */
  readonly baselineNodeFlags: readonly string[] | undefined;
  /** Gateway flags for this checkout's build only (not the baseline's): `--gateway-args='--http2-codec js'`. */
  readonly gatewayArgs: readonly string[];
  readonly out: string;
  /** The results' file name: <out>/<name>.json|.svg|.md. */
  readonly name: string;
  /** Also measure the idle demo of `npm start` (and the baseline's), --runs times each. */
  readonly idleDemo: boolean;
  readonly help: boolean;
}

/** The scenario names in parentheses, wrapped under the --scenario line of the help. */
function wrapNames(names: readonly string[]): string {
  const lines: string[] = [];
  let line = '';
  for (const name of names) {
    const next = line === '' ? name : `${line}, ${name}`;
    if (next.length > 70 && line !== '') {
      lines.push(`${line},`);
      line = name;
    } else line = next;
  }
  lines.push(line);
  return lines
    .map((l, i) => `${' '.repeat(24)}${i === 0 ? '(' : ' '}${l}${i === lines.length - 1 ? ')' : ''}`)
    .join('\n');
}

export const BENCH_HELP = `npm run bench -- [flags]

  --quick               short runs (2 s each, 1 s warm-up), still 3 runs and medians
  --scenario <names>    comma-separated or repeated; default: all
${wrapNames(SCENARIOS.map((s) => s.name))}
  --config <kinds>      only these configs: ${PEERS.join(', ')}, node-h2 (grpc-unary);
                        opt-in, only when named: ${OPT_IN_CONFIG_IDS.join(', ')} (the gateway
                        exporting traces at ratio 1 and 0.01 to a local OTLP sink; the scenarios with peers)
  --tool <names>        autocannon, wrk (default: both where installed); grpc-unary always uses
                        its own h2c gRPC client
  --duration <s>        seconds per measured run (default 5, quick 2)
  --runs <n>            measured runs per config and tool (default 3)
  --warmup <s>          warm-up seconds per config (default 2, quick 1)
  --no-install          do not run scripts/install-bench-tools.sh when nginx, haproxy or wrk is missing
  --node-backend        use the Node backend even when nginx is installed
  --cpu-prof            run the gateway under node --cpu-prof; profiles and a summary go to <out>/profiles
  --baseline <main.js>  also measure another build of the gateway (e.g. an older commit's dist/main.js)
                        beside this one, as config gateway-baseline: before and after in one run
  --node-flags <flags>  Node/V8 flags for the gateway, space-separated, instead of npm start's
                        (--max-semi-space-size=8), e.g. --node-flags='--max-semi-space-size=8 --single-threaded'
  --baseline-node-flags <flags>
                        the same for the baseline (default: the gateway's); with --baseline dist/main.js
                        it compares one build under two sets of flags
  --idle-demo           also measure npm start's demo at rest: the gateway process's RSS 20 and 40 s after
                        ready, --runs times (and the baseline's checkout's npm start, taking turns);
                        needs ports 8080 and 9901 free
  --gateway-args <flags>
                        gateway flags for this checkout's build only, space-separated (not the baseline's),
                        e.g. --gateway-args='--http2-codec js'
  --out <dir>           where latest.json, latest.svg and latest.md go (default bench/results)
  --name <name>         the results' file name instead of latest (<out>/<name>.json, .svg, .md)
`;

function list(values: readonly string[] | undefined): string[] {
  return (values ?? [])
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter((v) => v !== '');
}

function positive(name: string, text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0)
    throw new Error(`--${name} must be a positive number, not ${text}`);
  return value;
}

function nodeFlags(text: string | undefined): string[] | undefined {
  if (text === undefined) return undefined;
  const flags = text.split(/\s+/).filter((flag) => flag !== '');
  for (const flag of flags)
    if (!flag.startsWith('--')) throw new Error(`a Node flag starts with --, not ${flag}`);
  return flags;
}

function resultName(text: string | undefined): string {
  if (text === undefined) return 'latest';
  if (!/^[\w.-]+$/.test(text) || text.startsWith('.'))
    throw new Error(`--name is a file name (letters, digits, . _ -), not ${text}`);
  return text;
}

export function parseBenchArgs(argv: readonly string[]): BenchArgs {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      quick: { type: 'boolean' },
      scenario: { type: 'string', multiple: true },
      config: { type: 'string', multiple: true },
      tool: { type: 'string', multiple: true },
      duration: { type: 'string' },
      runs: { type: 'string' },
      warmup: { type: 'string' },
      'no-install': { type: 'boolean' },
      'node-backend': { type: 'boolean' },
      'cpu-prof': { type: 'boolean' },
      baseline: { type: 'string' },
      'node-flags': { type: 'string' },
      'baseline-node-flags': { type: 'string' },
      'gateway-args': { type: 'string' },
      out: { type: 'string' },
      name: { type: 'string' },
      'idle-demo': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  const quick = values.quick === true;
  const configs = list(values.config);
  const known: readonly string[] = [...PEERS, 'node-h2' satisfies ConfigKind, ...OPT_IN_CONFIG_IDS];
  for (const c of configs) {
    if (!known.includes(c)) throw new Error(`unknown --config ${c}; known: ${known.join(', ')}`);
  }
  const tools = list(values.tool);
  for (const t of tools) if (t !== 'autocannon' && t !== 'wrk') throw new Error(`unknown --tool ${t}`);
  const runs = positive('runs', values.runs, 3);
  if (!Number.isInteger(runs)) throw new Error('--runs must be an integer');
  return {
    quick,
    scenarios: list(values.scenario),
    configs,
    tools: tools.length > 0 ? (tools as LoadTool[]) : undefined,
    durationSec: positive('duration', values.duration, quick ? 2 : 5),
    runs,
    warmupSec: values.warmup === '0' ? 0 : positive('warmup', values.warmup, quick ? 1 : 2),
    install: values['no-install'] !== true,
    nodeBackend: values['node-backend'] === true,
    cpuProf: values['cpu-prof'] === true,
    baseline: values.baseline,
    nodeFlags: nodeFlags(values['node-flags']),
    baselineNodeFlags: nodeFlags(values['baseline-node-flags']),
    gatewayArgs: (values['gateway-args'] ?? '').split(/\s+/).filter((arg) => arg !== ''),
    out: values.out ?? 'bench/results',
    name: resultName(values.name),
    idleDemo: values['idle-demo'] === true,
    help: values.help === true,
  };
}
