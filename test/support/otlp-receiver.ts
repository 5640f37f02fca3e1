import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One span as an OTLP/HTTP protobuf export carries it (the fields the tests read). */
export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string;
  readonly name: string;
  /** 2 server, 3 client. */
  readonly kind: number;
  readonly startNs: bigint;
  readonly endNs: bigint;
  readonly attributes: Readonly<Record<string, string | number | boolean>>;
  /** 0 unset, 1 ok, 2 error. */
  readonly statusCode: number;
  readonly resource: Readonly<Record<string, string | number | boolean>>;
}

/**
 * A collector on 127.0.0.1 for tests: takes OTLP/HTTP protobuf trace exports at /v1/traces and decodes them with a
 * protobuf reader of its own (the opentelemetry-proto messages ExportTraceServiceRequest down to KeyValue), or
 * answers every export with `failWith` (a status) to play a failing collector.
 */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  exports = 0;
  failWith: number | undefined;
  readonly #server: Server;

  private constructor(server: Server) {
    this.#server = server;
  }

  static async start(): Promise<OtlpReceiver> {
    const server = createServer();
    const receiver = new OtlpReceiver(server);
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        receiver.exports++;
        if (receiver.failWith !== undefined) {
          res.writeHead(receiver.failWith).end();
          return;
        }
        if (req.url !== '/v1/traces' || req.headers['content-type'] !== 'application/x-protobuf') {
          res.writeHead(415).end();
          return;
        }
        receiver.spans.push(...decodeExport(Buffer.concat(chunks)));
        res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/v1/traces`;
  }

  close(): Promise<void> {
    this.#server.closeAllConnections();
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
}

type Field = { readonly no: number; readonly wire: number; readonly value: bigint | Buffer };

function fields(buf: Buffer): Field[] {
  const out: Field[] = [];
  let pos = 0;
  const varint = (): bigint => {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      const byte = buf[pos++]!;
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return result;
      shift += 7n;
    }
  };
  while (pos < buf.length) {
    const key = Number(varint());
    const no = key >>> 3;
    const wire = key & 7;
    if (wire === 0) out.push({ no, wire, value: varint() });
    else if (wire === 1) {
      out.push({ no, wire, value: buf.readBigUInt64LE(pos) });
      pos += 8;
    } else if (wire === 2) {
      const length = Number(varint());
      out.push({ no, wire, value: buf.subarray(pos, pos + length) });
      pos += length;
    } else if (wire === 5) {
      out.push({ no, wire, value: BigInt(buf.readUInt32LE(pos)) });
      pos += 4;
    } else throw new Error(`unexpected wire type ${wire}`);
  }
  return out;
}

const bytesOf = (f: Field[], no: number): Buffer[] =>
  f.filter((x) => x.no === no && x.wire === 2).map((x) => x.value as Buffer);
const one = (f: Field[], no: number): Field | undefined => f.find((x) => x.no === no);

function anyValue(buf: Buffer): string | number | boolean {
  const f = fields(buf)[0];
  if (f === undefined) return '';
  if (f.no === 1) return (f.value as Buffer).toString('utf8');
  if (f.no === 2) return f.value === 1n;
  if (f.no === 3) return Number(BigInt.asIntN(64, f.value as bigint));
  if (f.no === 4) return Buffer.from(new BigUint64Array([f.value as bigint]).buffer).readDoubleLE(0);
  return '';
}

function keyValues(list: Buffer[]): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const kv of list) {
    const f = fields(kv);
    const key = bytesOf(f, 1)[0]?.toString('utf8') ?? '';
    const value = bytesOf(f, 2)[0];
    out[key] = value === undefined ? '' : anyValue(value);
  }
  return out;
}

function decodeExport(body: Buffer): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const resourceSpans of bytesOf(fields(body), 1)) {
    const rs = fields(resourceSpans);
    const resourceBytes = bytesOf(rs, 1)[0];
    const resource = resourceBytes === undefined ? {} : keyValues(bytesOf(fields(resourceBytes), 1));
    for (const scopeSpans of bytesOf(rs, 2)) {
      for (const spanBytes of bytesOf(fields(scopeSpans), 2)) {
        const s = fields(spanBytes);
        const status = bytesOf(s, 15)[0];
        spans.push({
          traceId: bytesOf(s, 1)[0]?.toString('hex') ?? '',
          spanId: bytesOf(s, 2)[0]?.toString('hex') ?? '',
          parentSpanId: bytesOf(s, 4)[0]?.toString('hex') ?? '',
          name: bytesOf(s, 5)[0]?.toString('utf8') ?? '',
          kind: Number(one(s, 6)?.value ?? 0n),
          startNs: (one(s, 7)?.value as bigint | undefined) ?? 0n,
          endNs: (one(s, 8)?.value as bigint | undefined) ?? 0n,
          attributes: keyValues(bytesOf(s, 9)),
          statusCode: status === undefined ? 0 : Number(one(fields(status), 3)?.value ?? 0n),
          resource,
        });
      }
    }
  }
  return spans;
}
