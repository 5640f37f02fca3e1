import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DemoProcess, startDemo } from '../browser/demo-process.ts';
import { builtProgram, eventually } from '../support/gateway-process.ts';
import { type GreeterStub, greeterStub, hello, helloStream } from '../support/greeter-stub.ts';

/**
 * Issue 13, "Demo and docs": the demo's gRPC service `demo.Greeter` through the demo Gateway (GRPCRoute to
 * ServiceImport greeter, h2c on the HTTP listener), called by a real gRPC stack (grpc-js with protobufjs
 * reading src/demo/greeter/greeter.proto, so the hand-written wire format is checked against a real codec) and by
 * the project's own client, `npm run demo:grpc`. Stopping pods through the admin endpoint moves the answers
 * to the next locality tier.
 */
const ROOT = resolve(import.meta.dirname, '../..');

interface ScriptAnswer {
  readonly pod: string;
  readonly cluster: string;
  readonly zone: string;
  readonly message: string;
  readonly grpcStatus: number;
}

/** `npm run demo:grpc -- --url <gateway> --count n`, as a user runs it; its lines, parsed. */
function runClientScript(
  url: string,
  count: number,
  extra: readonly string[] = [],
): Promise<{ exitCode: number; answers: ScriptAnswer[] }> {
  return new Promise((done, fail) => {
    execFile(
      process.execPath,
      [builtProgram('demo/greeter/grpc-hello.js'), '--url', url, '--count', String(count), ...extra],
      { cwd: ROOT, timeout: 20_000 },
      (error, stdout) => {
        if (error && typeof error.code !== 'number') return fail(error);
        const answers = stdout
          .trim()
          .split('\n')
          .map((line) => {
            const m = /^pod (\S+) {2}cluster (\S+) {2}zone (\S+) {2}"(.*)" {2}grpc-status (\d+) /.exec(line);
            if (!m) throw new Error(`unexpected line from the client script: ${line}`);
            return { pod: m[1]!, cluster: m[2]!, zone: m[3]!, message: m[4]!, grpcStatus: Number(m[5]) };
          });
        done({ exitCode: typeof error?.code === 'number' ? error.code : 0, answers });
      },
    );
  });
}

describe('the demo gRPC service through the gateway', () => {
  let demo: DemoProcess & { readonly eastWestPort: number };
  let stub: GreeterStub;

  beforeAll(async () => {
    demo = await startDemo();
    stub = greeterStub(demo.webUrl.replace('http://', ''));
    // Ready means the first table is applied; the members' derived imports may follow it by a debounce, and
    // grpc-js backs off between connection attempts: wait for the first answer, the assertions come after.
    await eventually(() => hello(stub, 'ready'), 40_000);
  }, 90_000);

  afterAll(async () => {
    stub?.close();
    await demo?.stop();
  }, 30_000);

  it('has an accepted GRPCRoute with resolved refs, and says in the banner how to call it', async () => {
    const dump = (await (await fetch(`${demo.adminUrl}/config_dump`)).json()) as {
      statuses: Record<string, { status: { parents: { conditions: { type: string; status: string }[] }[] } }>;
    };
    const conditions = dump.statuses['GRPCRoute/demo/greeter']?.status.parents[0]?.conditions ?? [];
    expect(conditions.map((c) => `${c.type}=${c.status}`)).toEqual(['Accepted=True', 'ResolvedRefs=True']);
    expect(demo.output()).toMatch(/npm run demo:grpc -- --url http:\/\/127\.0\.0\.1:\d+ /);
  });

  it('answers from a pod in the gateway zone, to grpc-js and to the project client', async () => {
    for (let i = 0; i < 10; i++) {
      const reply = await hello(stub, 'grpc-js');
      expect(reply).toMatchObject({ message: 'hello grpc-js', cluster: 'east-1', zone: 'us-east-1a' });
      expect(reply.pod).toMatch(/^greeter-us-east-1a-[12]$/);
    }
    const streamed = await helloStream(stub, 'stream');
    expect(streamed.map((r) => r.message)).toEqual([
      'hello stream (1/3)',
      'hello stream (2/3)',
      'hello stream (3/3)',
    ]);
    expect(new Set(streamed.map((r) => r.zone))).toEqual(new Set(['us-east-1a']));

    const script = await runClientScript(demo.webUrl, 3);
    expect(script.exitCode).toBe(0);
    expect(script.answers).toHaveLength(3);
    for (const answer of script.answers)
      expect(answer).toMatchObject({
        cluster: 'east-1',
        zone: 'us-east-1a',
        message: 'hello demo',
        grpcStatus: 0,
      });
  }, 30_000);

  it('is reachable east-west too: h2c with prior knowledge to greeter.demo.svc.clusterset.local:50051', async () => {
    const eastWest = greeterStub(`127.0.0.1:${demo.eastWestPort}`, 'greeter.demo.svc.clusterset.local:50051');
    try {
      for (let i = 0; i < 5; i++) {
        const reply = await hello(eastWest, 'east-west');
        expect(reply).toMatchObject({ message: 'hello east-west', cluster: 'east-1', zone: 'us-east-1a' });
      }
      const script = await runClientScript(`http://127.0.0.1:${demo.eastWestPort}`, 2, [
        '--authority',
        'greeter.demo.svc.clusterset.local:50051',
      ]);
      expect(script.exitCode).toBe(0);
      expect(script.answers.map((a) => `${a.cluster} ${a.zone} ${a.grpcStatus}`)).toEqual(
        Array(2).fill('east-1 us-east-1a 0'),
      );
      const unknown = greeterStub(`127.0.0.1:${demo.eastWestPort}`, 'nope.demo.svc.clusterset.local:50051');
      await expect(hello(unknown, 'x')).rejects.toThrow();
      unknown.close();
    } finally {
      eastWest.close();
    }
  }, 30_000);

  it('moves to the next tier when the near pods stop, and back when they start', async () => {
    await demo.adminPost('/demo/stop?service=greeter&zone=us-east-1a');
    await eventually(async () => expect((await hello(stub, 'x')).zone).toBe('us-east-1b'), 10_000);
    // Once it answers from the next zone, every call does, with no errors in between.
    for (let i = 0; i < 10; i++)
      expect(await hello(stub, 'x')).toMatchObject({ pod: 'greeter-us-east-1b-1', cluster: 'east-1' });
    const script = await runClientScript(demo.webUrl, 3);
    expect(script.exitCode).toBe(0);
    expect(script.answers.map((a) => `${a.pod} ${a.grpcStatus}`)).toEqual(
      Array(3).fill('greeter-us-east-1b-1 0'),
    );

    // The whole local cluster down: east-2, the same region.
    await demo.adminPost('/demo/stop?service=greeter&cluster=east-1');
    await eventually(async () => expect((await hello(stub, 'x')).cluster).toBe('east-2'), 10_000);
    expect((await runClientScript(demo.webUrl, 1)).answers[0]).toMatchObject({
      cluster: 'east-2',
      zone: 'us-east-1c',
      grpcStatus: 0,
    });

    await demo.adminPost('/demo/start?service=greeter');
    await eventually(async () => expect((await hello(stub, 'x')).zone).toBe('us-east-1a'), 10_000);
  }, 60_000);
});
