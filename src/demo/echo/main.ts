import { parseArgs } from 'node:util';
import { startEchoServer } from './echo-server.ts';

const USAGE = `Usage: node --import tsx src/demo/echo/main.ts [flags]
  --host <addr>         address to listen on (default 127.0.0.1)
  --port <n>            port (default 0: any free port)
  --namespace <ns>      reported namespace (default default)
  --service <name>      reported service (default echo)
  --pod <name>          reported pod (default echo-0)
  --cluster <name>      reported cluster (default local)
  --zone <name>         reported zone (default zone-a)
  --node <name>         reported node (optional)`;

const { values } = parseArgs({
  options: {
    host: { type: 'string', default: '127.0.0.1' },
    port: { type: 'string', default: '0' },
    namespace: { type: 'string', default: 'default' },
    service: { type: 'string', default: 'echo' },
    pod: { type: 'string', default: 'echo-0' },
    cluster: { type: 'string', default: 'local' },
    zone: { type: 'string', default: 'zone-a' },
    node: { type: 'string' },
    help: { type: 'boolean', default: false },
  },
});

if (values.help) {
  process.stdout.write(`${USAGE}\n`);
} else {
  const server = await startEchoServer({
    host: values.host,
    port: Number(values.port),
    identity: {
      namespace: values.namespace,
      service: values.service,
      pod: values.pod,
      cluster: values.cluster,
      zone: values.zone,
      ...(values.node === undefined ? {} : { node: values.node }),
    },
  });
  process.stdout.write(
    `echo ${values.namespace}/${values.service} (${values.pod}) on ${values.host}:${server.port}\n`,
  );
  const stop = (): void => {
    void server.close().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
