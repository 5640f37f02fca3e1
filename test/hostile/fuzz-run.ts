import { readdirSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { Registry } from 'prom-client';
import { mulberry32 } from '../../src/lb/index.ts';
import { compileRouteTable, ProxyMetrics } from '../../src/proxy/index.ts';
import { parseManifest } from '../../src/sources/file/manifest-parser.ts';
import { backend, entry, send, silentLogger, simpleTable, startProxy, to } from '../proxy/fixtures.ts';
import { createRoundRobinFactory } from '../proxy/round-robin-factory.ts';
import { closeAll, startEchoes } from '../support/echo.ts';
import { REQUEST_CASES } from './request-corpus.ts';
import { translateObjects } from './translation.ts';

export interface FuzzFigures {
  readonly seed: number;
  readonly seconds: number;
  readonly requests: number;
  readonly manifests: number;
  readonly goodChecks: number;
  /**
   * Mutated manifests whose objects made the translator throw. The reconciler contains that (the last good
   * table stays; see test/controller), so it is a figure, not a failure; object schema validation is what
   * turns them into per-object conditions.
   */
  readonly translatorThrows: number;
  readonly translatorThrowSamples: readonly string[];
  readonly statuses: Record<string, number>;
  readonly fdsBefore: number;
  readonly fdsAfter: number;
  readonly failures: readonly string[];
}

const GOLDEN = new URL('../golden/', import.meta.url);
const SEEDS = readdirSync(GOLDEN)
  .filter((f) => f.endsWith('.in.yaml'))
  .map((f) => readFileSync(new URL(f, GOLDEN), 'utf8'));

const openFds = (): number => readdirSync('/proc/self/fd').length;

const REQUEST_SEEDS = [
  'GET / HTTP/1.1\r\nHost: example.com\r\n\r\n',
  'POST /upload HTTP/1.1\r\nHost: example.com\r\nContent-Length: 5\r\n\r\nhello',
  'POST /c HTTP/1.1\r\nHost: example.com\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n',
  'GET /r/aaaa HTTP/1.1\r\nHost: example.com\r\nx-id: aaaa\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n',
  ...REQUEST_CASES.map((c) => c.bytes).filter((b) => b.length < 4096),
];
const SPICE = [
  '\r\n',
  '\r',
  '\n',
  '\x00',
  ' ',
  ':',
  'Host: other\r\n',
  'HTTP/2.0',
  '\xff',
  'Transfer-Encoding: chunked\r\n',
  'Content-Length: 99\r\n',
  '%00',
  '/../',
  '\t',
  '*',
];

function mutate(text: string, rand: () => number, spice: readonly string[]): string {
  let out = text;
  const edits = 1 + Math.floor(rand() * 4);
  for (let i = 0; i < edits; i++) {
    const at = Math.floor(rand() * (out.length + 1));
    switch (Math.floor(rand() * 6)) {
      case 0:
        out = out.slice(0, at) + out.slice(at + 1 + Math.floor(rand() * 8));
        break;
      case 1:
        out = out.slice(0, at) + spice[Math.floor(rand() * spice.length)] + out.slice(at);
        break;
      case 2:
        out = out.slice(0, at) + String.fromCharCode(Math.floor(rand() * 256)) + out.slice(at + 1);
        break;
      case 3: {
        const from = Math.floor(rand() * out.length);
        out = out.slice(0, at) + out.slice(from, from + Math.floor(rand() * 64)) + out.slice(at);
        break;
      }
      case 4:
        out = out.slice(0, at);
        break;
      default:
        out = out.slice(0, at) + 'A'.repeat(Math.floor(rand() * 2000)) + out.slice(at);
    }
  }
  return out;
}

/**
 * One mutated manifest through the file source's parser, the translator and the proxy's compiler: a
 * failure message, 'translator' when only the translator threw, or undefined.
 */
function fuzzManifest(text: string, deps: Parameters<typeof compileRouteTable>[1]): string | undefined {
  let parsed: ReturnType<typeof parseManifest>;
  try {
    parsed = parseManifest('fuzz.yaml', text);
  } catch (err) {
    return `parser threw ${(err as Error).message}`;
  }
  let result: ReturnType<typeof translateObjects>;
  try {
    result = translateObjects(parsed.objects);
  } catch (err) {
    if (translatorSamples.length < 5) {
      const where = (err as Error).stack?.split('\n')[1]?.trim() ?? '';
      translatorSamples.push(`${(err as Error).message} ${where}`);
    }
    return 'translator';
  }
  try {
    compileRouteTable(result.table, deps);
  } catch (err) {
    return `compile threw ${(err as Error).message}`;
  }
  return undefined;
}

const translatorSamples: string[] = [];

/** Writes bytes, reads the first status line (or none), closes. Resolves 0 when nothing came back. */
function probe(port: number, bytes: string): Promise<number> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let data = '';
    const finish = (): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(Number(/^HTTP\/1\.[01] (\d{3})/.exec(data)?.[1] ?? 0));
    };
    const timer = setTimeout(finish, 300);
    socket.on('data', (d: Buffer) => {
      data += d.toString('latin1');
      if (data.includes('\r\n\r\n')) finish();
    });
    socket.on('error', finish);
    socket.on('close', finish);
    socket.on('connect', () => socket.write(Buffer.from(bytes, 'latin1')));
  });
}

/**
 * Feeds random and mutated requests to a live proxy and mutated manifests through parse, translate and
 * compile, for `seconds`. Records every failure: a 5xx answer, a throw, the good route not answering 200,
 * file descriptors left open.
 */
export async function runFuzz(seconds: number, seed: number): Promise<FuzzFigures> {
  const rand = mulberry32(seed);
  const echoes = await startEchoes(['good', 'regex']);
  const good = backend('good', [echoes[0]!.port]);
  const regex = backend('regex', [echoes[1]!.port]);
  const table = simpleTable(
    [
      entry([to(regex)], {
        path: { kind: 'RegularExpression', value: '/r/(a+)+' },
        headers: [{ kind: 'RegularExpression', name: 'x-id', value: '(a|aa)+' }],
      }),
      entry([to(good)], { path: { kind: 'PathPrefix', value: '/' } }),
    ],
    [good, regex],
  );
  const proxy = await startProxy(table, undefined, { limits: { headerTimeoutMs: 2_000 } });
  const port = proxy.port();
  const failures: string[] = [];
  const statuses: Record<string, number> = {};
  const compileDeps = {
    balancers: createRoundRobinFactory(),
    metrics: new ProxyMetrics(new Registry()),
    logger: silentLogger,
  };
  let requests = 0;
  let manifests = 0;
  let goodChecks = 0;
  let translatorThrows = 0;

  // Warm up the pools and the first connections before counting descriptors.
  await send(port, '/warm');
  const fdsBefore = openFds();
  const deadline = Date.now() + seconds * 1000;
  while (Date.now() < deadline && failures.length < 20) {
    const batch: Promise<void>[] = [];
    for (let i = 0; i < 16; i++) {
      const bytes =
        rand() < 0.15
          ? Array.from({ length: Math.floor(rand() * 300) }, () =>
              String.fromCharCode(Math.floor(rand() * 256)),
            ).join('')
          : mutate(REQUEST_SEEDS[Math.floor(rand() * REQUEST_SEEDS.length)]!, rand, SPICE);
      requests++;
      batch.push(
        probe(port, bytes).then((status) => {
          statuses[status] = (statuses[status] ?? 0) + 1;
          if (status >= 500 && status !== 505)
            failures.push(`request answered ${status}: ${JSON.stringify(bytes.slice(0, 200))}`);
        }),
      );
    }
    for (let i = 0; i < 2; i++) {
      const text = mutate(SEEDS[Math.floor(rand() * SEEDS.length)]!, rand, [
        '*a',
        '&a ',
        '<<: *a\n',
        '\n---\n',
        '{',
        '[',
        ': ',
        '\t',
        '"',
        "'",
        '\x00',
        'kind: List\nitems:\n',
        '  - ',
      ]);
      manifests++;
      const failure = fuzzManifest(text, compileDeps);
      if (failure === 'translator') {
        translatorThrows++;
      } else if (failure !== undefined) {
        failures.push(`${failure}: ${JSON.stringify(text.slice(0, 300))}`);
      }
    }
    await Promise.all(batch);
    const check = await send(port, '/good').catch((err: Error) => ({ status: 0, text: err.message }));
    goodChecks++;
    if (check.status !== 200) failures.push(`good route answered ${check.status}: ${check.text}`);
  }
  await new Promise((r) => setTimeout(r, 500));
  const fdsAfter = openFds();
  if (fdsAfter > fdsBefore + 8) failures.push(`file descriptors: ${fdsBefore} before, ${fdsAfter} after`);
  await proxy.close();
  await closeAll(echoes);
  return {
    seed,
    seconds,
    requests,
    manifests,
    goodChecks,
    translatorThrows,
    translatorThrowSamples: translatorSamples,
    statuses,
    fdsBefore,
    fdsAfter,
    failures,
  };
}
