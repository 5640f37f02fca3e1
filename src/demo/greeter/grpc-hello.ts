import { parseArgs } from 'node:util';
import { GreeterClient } from './greeter-client.ts';
import type { HelloReply } from './greeter-messages.ts';
import { describeGrpcStatus, GRPC_STATUS } from './grpc-status.ts';

const USAGE = `Usage: npm run demo:grpc -- [flags]   (node --import tsx src/demo/greeter/grpc-hello.ts [flags])
Calls the demo's gRPC service demo.Greeter through the gateway over h2c and prints who answered.
  --url <url>        the gateway's HTTP listener (default http://127.0.0.1:8080)
  --authority <a>    the :authority to send, e.g. greeter.demo.svc.clusterset.local:50051 for east-west
  --name <text>      HelloRequest.name (default demo)
  --stream           call HelloStream (server streaming, three replies) instead of Hello
  --count <n>        make n calls one after another on one connection (default 1)
  --timeout-ms <n>   per call (default 5000)
Exits 1 when any call ends with a grpc-status other than 0.`;

const { values } = parseArgs({
  options: {
    url: { type: 'string', default: 'http://127.0.0.1:8080' },
    authority: { type: 'string' },
    name: { type: 'string', default: 'demo' },
    stream: { type: 'boolean', default: false },
    count: { type: 'string', default: '1' },
    'timeout-ms': { type: 'string', default: '5000' },
    help: { type: 'boolean', default: false },
  },
});

const describeReply = (reply: HelloReply): string =>
  `pod ${reply.pod}  cluster ${reply.cluster}  zone ${reply.zone}  ${JSON.stringify(reply.message)}`;

const positive = (text: string): number | undefined => (/^[1-9]\d*$/.test(text) ? Number(text) : undefined);
const count = positive(values.count);
const timeoutMs = positive(values['timeout-ms']);
const urlOk = URL.canParse(values.url) && new URL(values.url).protocol === 'http:';

if (values.help) {
  process.stdout.write(`${USAGE}\n`);
} else if (count === undefined || timeoutMs === undefined || !urlOk) {
  process.stderr.write(`--count and --timeout-ms take positive integers, --url an http:// URL\n${USAGE}\n`);
  process.exitCode = 2;
} else {
  const method = values.stream ? 'HelloStream' : 'Hello';
  const client = new GreeterClient(values.url, {
    timeoutMs,
    ...(values.authority === undefined ? {} : { authority: values.authority }),
  });
  let failures = 0;
  for (let i = 0; i < count; i++) {
    const result = await client.call(method, { name: values.name });
    const ok = result.grpcStatus === GRPC_STATUS.OK;
    if (!ok) failures++;
    const detail = !ok && result.grpcMessage ? `: ${result.grpcMessage}` : '';
    const status = `grpc-status ${describeGrpcStatus(result.grpcStatus)}${detail}`;
    const lines =
      method === 'Hello' && result.replies.length === 1
        ? [`${describeReply(result.replies[0]!)}  ${status}`]
        : [...result.replies.map(describeReply), status];
    process.stdout.write(`${lines.join('\n')}\n`);
  }
  client.close();
  process.exitCode = failures === 0 ? 0 : 1;
}
