import { createSocket, type Socket as DgramSocket } from 'node:dgram';
import { connect, createServer, type Server, type Socket } from 'node:net';

/** A TCP backend that greets with its name (server speaks first) and answers every line with `name:line`. */
export interface TcpBackend {
  readonly name: string;
  port: number;
  server: Server | undefined;
  readonly sockets: Set<Socket>;
}

export async function startTcpBackend(name: string, port = 0): Promise<TcpBackend> {
  const backend: TcpBackend = { name, port, server: undefined, sockets: new Set() };
  await restartTcpBackend(backend);
  return backend;
}

export async function restartTcpBackend(backend: TcpBackend): Promise<void> {
  const server = createServer((socket) => {
    backend.sockets.add(socket);
    socket.on('close', () => backend.sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    socket.write(`hello from ${backend.name}\n`);
    let buffered = '';
    socket.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      let newline = buffered.indexOf('\n');
      while (newline >= 0) {
        socket.write(`${backend.name}:${buffered.slice(0, newline)}\n`);
        buffered = buffered.slice(newline + 1);
        newline = buffered.indexOf('\n');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(backend.port, '127.0.0.1', resolve));
  backend.port = (server.address() as { port: number }).port;
  backend.server = server;
}

/** Stops listening and drops every open connection, as a pod that dies does. */
export async function stopTcpBackend(backend: TcpBackend): Promise<void> {
  const server = backend.server;
  backend.server = undefined;
  for (const socket of backend.sockets) socket.destroy();
  if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** A TCP server that accepts and never writes a byte. */
export async function startSilentBackend(): Promise<{ port: number; server: Server; sockets: Set<Socket> }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => socket.destroy());
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as { port: number }).port, server, sockets };
}

/** A client connection that collects lines. */
export interface LineClient {
  readonly socket: Socket;
  readonly lines: string[];
  readonly closed: Promise<void>;
  nextLine(timeoutMs?: number): Promise<string>;
}

export async function openLineClient(port: number): Promise<LineClient> {
  const socket = connect({ host: '127.0.0.1', port });
  const lines: string[] = [];
  const waiters: ((line: string) => void)[] = [];
  let buffered = '';
  socket.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    let newline = buffered.indexOf('\n');
    while (newline >= 0) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      const waiter = waiters.shift();
      if (waiter) waiter(line);
      else lines.push(line);
      newline = buffered.indexOf('\n');
    }
  });
  socket.on('error', () => {});
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  return {
    socket,
    lines,
    closed,
    nextLine(timeoutMs = 5_000) {
      const ready = lines.shift();
      if (ready !== undefined) return Promise.resolve(ready);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('no line in time')), timeoutMs);
        socket.once('close', () => reject(new Error('connection closed')));
        waiters.push((line) => {
          clearTimeout(timer);
          resolve(line);
        });
      });
    },
  };
}

/** Connects, reads the greeting and says goodbye: the backend name that served the connection. */
export async function greetingOf(port: number): Promise<string> {
  const client = await openLineClient(port);
  try {
    const greeting = await client.nextLine();
    return greeting.replace(/^hello from /, '');
  } finally {
    client.socket.destroy();
  }
}

/** A UDP backend that answers every datagram with `name:payload` from its own socket. */
export interface UdpBackend {
  readonly name: string;
  port: number;
  socket: DgramSocket | undefined;
}

export async function startUdpBackend(name: string, port = 0): Promise<UdpBackend> {
  const backend: UdpBackend = { name, port, socket: undefined };
  const socket = createSocket('udp4');
  socket.on('message', (msg, rinfo) => socket.send(`${name}:${msg.toString()}`, rinfo.port, rinfo.address));
  await new Promise<void>((resolve) => socket.bind(port, '127.0.0.1', resolve));
  backend.port = socket.address().port;
  backend.socket = socket;
  return backend;
}

export async function stopUdpBackend(backend: UdpBackend): Promise<void> {
  const socket = backend.socket;
  backend.socket = undefined;
  if (socket) await new Promise<void>((resolve) => socket.close(() => resolve()));
}

/** A client socket (one flow): sends a datagram and waits for the first answer, or undefined after a while. */
export interface UdpClient {
  exchange(payload: string, timeoutMs?: number): Promise<string | undefined>;
  close(): void;
}

export async function openUdpClient(port: number): Promise<UdpClient> {
  const socket = createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const answers: string[] = [];
  let waiter: ((answer: string) => void) | undefined;
  socket.on('message', (msg) => {
    if (waiter) {
      const w = waiter;
      waiter = undefined;
      w(msg.toString());
    } else answers.push(msg.toString());
  });
  socket.on('error', () => {});
  return {
    exchange(payload, timeoutMs = 1_000) {
      answers.length = 0;
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          waiter = undefined;
          resolve(undefined);
        }, timeoutMs);
        waiter = (answer) => {
          clearTimeout(timer);
          resolve(answer);
        };
        socket.send(payload, port, '127.0.0.1');
      });
    },
    close() {
      socket.close();
    },
  };
}

/** A UDP port that was free a moment ago. */
export async function freeUdpPort(): Promise<number> {
  const socket = createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const { port } = socket.address();
  await new Promise<void>((resolve) => socket.close(() => resolve()));
  return port;
}

/** An EndpointSlice of one endpoint on 127.0.0.1, local or imported from `cluster`. */
export function slice(
  name: string,
  options: {
    readonly service: string;
    readonly namespace: string;
    readonly port: number;
    readonly protocol?: 'TCP' | 'UDP';
    readonly cluster?: string;
    readonly zone?: string;
    readonly pod?: string;
  },
): unknown {
  const labels: Record<string, string> =
    options.cluster === undefined
      ? { 'kubernetes.io/service-name': options.service }
      : {
          'multicluster.kubernetes.io/service-name': options.service,
          'multicluster.kubernetes.io/source-cluster': options.cluster,
        };
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name, namespace: options.namespace, labels },
    addressType: 'IPv4',
    endpoints: [
      {
        addresses: ['127.0.0.1'],
        conditions: { ready: true },
        ...(options.zone ? { zone: options.zone } : {}),
        ...(options.pod
          ? { targetRef: { kind: 'Pod', name: options.pod, namespace: options.namespace } }
          : {}),
      },
    ],
    ports: [{ name: 'main', protocol: options.protocol ?? 'TCP', port: options.port }],
  };
}

export function layer4Route(
  kind: 'TCPRoute' | 'UDPRoute',
  name: string,
  namespace: string,
  spec: Record<string, unknown>,
): unknown {
  return { apiVersion: 'gateway.networking.k8s.io/v1', kind, metadata: { name, namespace }, spec };
}

/** Reads one sample of a Prometheus text exposition (summed over series whose labels include `labels`). */
export function metricValue(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (!Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) continue;
    sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}
