import { describe, expect, it } from 'vitest';
import type {
  Http2ConnectionEnd,
  Http2Stream,
  Http2StreamHandler,
  Http2StreamReset,
} from '../../../src/net/http2/connection.ts';
import { Http2Connection } from '../../../src/net/http2/connection.ts';
import {
  CLIENT_PREFACE,
  ErrorCode,
  encodeData,
  encodeFrame,
  encodeGoaway,
  encodeHeaders,
  encodePing,
  encodeRstStream,
  encodeSettings,
  encodeWindowUpdate,
  Flag,
  FrameReader,
  FrameType,
  readGoaway,
  readRstStreamCode,
  SettingId,
} from '../../../src/net/http2/frames.ts';
import { HpackDecoder, HpackEncoder } from '../../../src/net/http2/hpack.ts';

/** Flushes run when the test says (the end of a poll phase, by hand). */
class ManualTurns {
  private pending: (() => void)[] = [];
  schedule = (flush: () => void) => {
    this.pending.push(flush);
  };
  run(): void {
    for (let i = 0; i < 100 && this.pending.length > 0; i++) {
      const batch = this.pending;
      this.pending = [];
      for (const flush of batch) flush();
    }
  }
}

/** A transport that records what the connection wrote; `blocked` simulates a peer that does not read. */
class RecordingTransport {
  written: Buffer[] = [];
  writes = 0;
  ended = false;
  destroyed = false;
  blocked = false;
  onWrite: ((chunks: readonly Buffer[]) => void) | null = null;
  write(chunks: readonly Buffer[]): boolean {
    this.writes++;
    this.written.push(...chunks);
    this.onWrite?.(chunks);
    return !this.blocked;
  }
  end(): void {
    this.ended = true;
  }
  destroy(): void {
    this.destroyed = true;
  }
  /** Every frame written so far, read back. */
  frames(): { type: number; flags: number; streamId: number; payload: Buffer }[] {
    const reader = new FrameReader({ maxFrameSize: 1 << 24 });
    const out: { type: number; flags: number; streamId: number; payload: Buffer }[] = [];
    let bytes = Buffer.concat(this.written);
    if (bytes.subarray(0, CLIENT_PREFACE.length).equals(CLIENT_PREFACE))
      bytes = bytes.subarray(CLIENT_PREFACE.length);
    reader.push(bytes, (f) =>
      out.push({ type: f.type, flags: f.flags, streamId: f.streamId, payload: f.payload }),
    );
    return out;
  }
  goaway(): { lastStreamId: number; code: number } | undefined {
    const frame = this.frames().find((f) => f.type === FrameType.GOAWAY);
    return frame === undefined ? undefined : readGoaway(frame.payload);
  }
  resets(): [number, number][] {
    return this.frames()
      .filter((f) => f.type === FrameType.RST_STREAM)
      .map((f) => [f.streamId, readRstStreamCode(f.payload)]);
  }
}

interface Recorded {
  headers: (string[] | undefined)[];
  data: string[];
  trailers: string[][];
  ended: boolean;
  reset: Http2StreamReset | null;
  drains: number;
  closed: boolean;
}

function recorder(consume = true): { handler: Http2StreamHandler; seen: Recorded } {
  const seen: Recorded = {
    headers: [],
    data: [],
    trailers: [],
    ended: false,
    reset: null,
    drains: 0,
    closed: false,
  };
  const handler: Http2StreamHandler = {
    headers: (_s, fields) => seen.headers.push(fields),
    data: (stream, chunk) => {
      seen.data.push(chunk.toString('latin1'));
      if (consume) stream.consumed(chunk.length);
    },
    trailers: (_s, fields) => seen.trailers.push(fields),
    end: () => {
      seen.ended = true;
    },
    reset: (_s, reset) => {
      seen.reset = reset;
    },
    drain: () => {
      seen.drains++;
    },
    close: () => {
      seen.closed = true;
    },
  };
  return { handler, seen };
}

/** A client and a server connection joined in memory. */
function pair(serverLimits = {}) {
  const turns = new ManualTurns();
  const toServer = new RecordingTransport();
  const toClient = new RecordingTransport();
  const requests: { stream: Http2Stream; fields: string[] | undefined; seen: Recorded }[] = [];
  const ends: Http2ConnectionEnd[] = [];
  let client: Http2Connection | null = null;
  const server = new Http2Connection({
    role: 'server',
    transport: toClient,
    limits: serverLimits,
    scheduleFlush: turns.schedule,
    handler: {
      stream(stream, fields) {
        const { handler, seen } = recorder();
        stream.handler = handler;
        requests.push({ stream, fields, seen });
      },
      close: (end) => ends.push(end),
    },
  });
  client = new Http2Connection({
    role: 'client',
    transport: toServer,
    scheduleFlush: turns.schedule,
    handler: { close: (end) => ends.push(end) },
  });
  toServer.onWrite = (chunks) => {
    for (const chunk of chunks) server.receive(chunk);
  };
  toClient.onWrite = (chunks) => {
    for (const chunk of chunks) client?.receive(chunk);
  };
  turns.run();
  return { turns, server, client, requests, ends, toServer, toClient };
}

const GET = [':method', 'GET', ':scheme', 'http', ':authority', 'example.com', ':path', '/'];

describe('Http2Connection, client and server roles together', () => {
  it('carries a request with a body and a response with a body and trailers', () => {
    const { turns, client, requests } = pair();
    const { handler, seen } = recorder();
    const stream = client.request([...GET.slice(0, 1), 'POST', ...GET.slice(2)], false, handler)!;
    stream.sendData(Buffer.from('request body'), true);
    turns.run();
    expect(requests).toHaveLength(1);
    const request = requests[0]!;
    expect(request.fields).toEqual([':method', 'POST', ...GET.slice(2)]);
    expect(request.seen.data.join('')).toBe('request body');
    expect(request.seen.ended).toBe(true);
    request.stream.sendHeaders([':status', '200', 'content-type', 'text/plain'], false);
    request.stream.sendData(Buffer.from('hello '), false);
    request.stream.sendData(Buffer.from('world'), false);
    request.stream.sendTrailers(['grpc-status', '0']);
    turns.run();
    expect(seen.headers).toEqual([[':status', '200', 'content-type', 'text/plain']]);
    expect(seen.data.join('')).toBe('hello world');
    expect(seen.trailers).toEqual([['grpc-status', '0']]);
    expect(seen.ended).toBe(true);
    expect(seen.closed).toBe(true);
    expect(request.seen.closed).toBe(true);
    expect([client.activeStreams, requests[0]!.stream.closed]).toEqual([0, true]);
  });

  it('delivers 1xx headers before the final ones', () => {
    const { turns, client, requests } = pair();
    const { handler, seen } = recorder();
    client.request(GET, true, handler);
    turns.run();
    requests[0]!.stream.sendHeaders([':status', '100'], false);
    requests[0]!.stream.sendHeaders([':status', '204'], true);
    turns.run();
    expect(seen.headers).toEqual([
      [':status', '100'],
      [':status', '204'],
    ]);
    expect(seen.ended).toBe(true);
  });

  it('writes the frames of one turn in one transport write', () => {
    const { turns, client, toServer } = pair();
    const before = toServer.writes;
    for (let i = 0; i < 10; i++) client.request(GET, true, recorder().handler);
    turns.run();
    expect(toServer.writes - before).toBe(1);
  });

  it('stops a body at the stream window until the reader consumes it, then sends the rest', () => {
    const { turns, client, requests } = pair();
    const { handler, seen } = recorder(false);
    let held: Http2Stream | null = null;
    const stream = client.request(GET, true, {
      ...handler,
      data: (s, chunk) => {
        held = s;
        handler.data(s, chunk);
      },
    })!;
    turns.run();
    const body = Buffer.alloc(200_000, 'x');
    requests[0]!.stream.sendHeaders([':status', '200'], false);
    expect(requests[0]!.stream.sendData(body, true)).toBe(false);
    turns.run();
    const received = () => seen.data.reduce((n, s) => n + s.length, 0);
    expect(received()).toBe(65_535);
    expect(seen.ended).toBe(false);
    held!.consumed(65_535);
    turns.run();
    expect(received()).toBe(131_070);
    stream.consumed(131_070 - 65_535);
    turns.run();
    stream.consumed(65_535);
    turns.run();
    expect(received()).toBe(200_000);
    expect(seen.ended).toBe(true);
    expect(requests[0]!.seen.drains).toBe(1);
  });

  it('resets a stream from either side: the other side hears the code once', () => {
    const { turns, client, requests } = pair();
    const { handler, seen } = recorder();
    const stream = client.request(GET, false, handler)!;
    turns.run();
    stream.reset(ErrorCode.CANCEL);
    turns.run();
    expect(requests[0]!.seen.reset).toEqual({ code: ErrorCode.CANCEL, byPeer: true, retryable: false });
    expect(seen.reset).toBeNull();
  });

  it('on GOAWAY, resets the client streams above the last stream id as retryable and keeps the rest', () => {
    const { turns, client, server, requests } = pair();
    const first = recorder();
    client.request(GET, true, first.handler);
    turns.run();
    server.close();
    const second = recorder();
    client.request(GET, true, second.handler);
    turns.run();
    expect(second.seen.reset).toEqual({ code: ErrorCode.NO_ERROR, byPeer: true, retryable: true });
    expect(client.canRequest).toBe(false);
    expect(requests).toHaveLength(1);
    requests[0]!.stream.sendHeaders([':status', '200'], true);
    turns.run();
    expect(first.seen.headers).toEqual([[':status', '200']]);
    expect(server.isClosed).toBe(true);
  });

  it('answers PING with an ACK and runs the callback of its own PING', () => {
    const { turns, client } = pair();
    let acked = 0;
    client.ping(() => acked++);
    turns.run();
    expect(acked).toBe(1);
  });
});

/** A server connection fed raw frames by a test playing a client. */
function rawServer(limits = {}, now = () => 0) {
  const turns = new ManualTurns();
  const transport = new RecordingTransport();
  const streams: Http2Stream[] = [];
  const ends: Http2ConnectionEnd[] = [];
  const server = new Http2Connection({
    role: 'server',
    transport,
    limits,
    now,
    scheduleFlush: turns.schedule,
    handler: {
      stream(stream) {
        stream.handler = recorder(false).handler;
        streams.push(stream);
      },
      close: (end) => ends.push(end),
    },
  });
  const encoder = new HpackEncoder();
  const send = (...frames: Buffer[]) => {
    for (const frame of frames) server.receive(frame);
    turns.run();
  };
  send(CLIENT_PREFACE, encodeSettings([]));
  const headers = (id: number, endStream = true, fields = GET) =>
    encodeHeaders(id, encoder.encode(fields), { endStream });
  return { server, transport, streams, ends, send, headers, encoder, turns };
}

describe('Http2Connection against a hostile client', () => {
  it('ends the connection with PROTOCOL_ERROR on a stream id from the client that is even', () => {
    const { transport, send, headers, ends } = rawServer();
    send(headers(2));
    expect(transport.goaway()?.code).toBe(ErrorCode.PROTOCOL_ERROR);
    expect(transport.ended).toBe(true);
    expect(ends).toEqual([expect.objectContaining({ code: ErrorCode.PROTOCOL_ERROR, by: 'local' })]);
  });

  it('ends the connection with PROTOCOL_ERROR on stream ids going backwards', () => {
    const { transport, send, headers } = rawServer();
    send(headers(5), headers(3));
    expect(transport.goaway()).toEqual(
      expect.objectContaining({ code: ErrorCode.PROTOCOL_ERROR, lastStreamId: 5 }),
    );
  });

  it('ends the connection when the first frame is not SETTINGS or the preface is wrong', () => {
    const first = new RecordingTransport();
    const turns = new ManualTurns();
    const server = new Http2Connection({
      role: 'server',
      transport: first,
      scheduleFlush: turns.schedule,
      handler: { close: () => {} },
    });
    server.receive(Buffer.concat([CLIENT_PREFACE, encodePing(Buffer.alloc(8), false)]));
    expect(first.goaway()?.code).toBe(ErrorCode.PROTOCOL_ERROR);
    const second = new RecordingTransport();
    const other = new Http2Connection({
      role: 'server',
      transport: second,
      scheduleFlush: turns.schedule,
      handler: { close: () => {} },
    });
    other.receive(Buffer.from('GET / HTTP/1.1\r\n\r\n'));
    expect(second.goaway()?.code).toBe(ErrorCode.PROTOCOL_ERROR);
  });

  it('ends a CONTINUATION flood with ENHANCE_YOUR_CALM after the frame limit', () => {
    const { transport, send, server } = rawServer({ maxContinuationFrames: 10 });
    send(encodeFrame(FrameType.HEADERS, 0, 1, Buffer.alloc(0)));
    for (let i = 0; i < 20 && !server.isClosed; i++)
      send(encodeFrame(FrameType.CONTINUATION, 0, 1, Buffer.alloc(0)));
    expect(transport.goaway()?.code).toBe(ErrorCode.ENHANCE_YOUR_CALM);
    expect(server.isClosed).toBe(true);
  });

  it('ends a header block over its byte limit with ENHANCE_YOUR_CALM, before it is complete', () => {
    const { transport, send } = rawServer({ maxHeaderBlockBytes: 1000 });
    send(encodeFrame(FrameType.HEADERS, 0, 1, Buffer.alloc(600)));
    send(encodeFrame(FrameType.CONTINUATION, 0, 1, Buffer.alloc(600)));
    expect(transport.goaway()?.code).toBe(ErrorCode.ENHANCE_YOUR_CALM);
  });

  it('ends the connection when a header block is interrupted by another frame', () => {
    const { transport, send } = rawServer();
    send(encodeFrame(FrameType.HEADERS, 0, 1, Buffer.alloc(1)), encodePing(Buffer.alloc(8), false));
    expect(transport.goaway()?.code).toBe(ErrorCode.PROTOCOL_ERROR);
  });

  it('ends the connection with COMPRESSION_ERROR on an undecodable header block', () => {
    const { transport, send } = rawServer();
    send(encodeHeaders(1, Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f]), { endStream: true }));
    expect(transport.goaway()?.code).toBe(ErrorCode.COMPRESSION_ERROR);
  });

  it('hands a header block over the list size limit to the owner as undefined', () => {
    const seen: (string[] | undefined)[] = [];
    const turns = new ManualTurns();
    const server = new Http2Connection({
      role: 'server',
      transport: new RecordingTransport(),
      limits: { maxHeaderListSize: 200 },
      scheduleFlush: turns.schedule,
      handler: {
        stream(stream, fields) {
          seen.push(fields);
          stream.handler = recorder().handler;
        },
        close: () => {},
      },
    });
    const encoder = new HpackEncoder();
    server.receive(Buffer.concat([CLIENT_PREFACE, encodeSettings([])]));
    server.receive(encodeHeaders(1, encoder.encode([...GET, 'x-big', 'v'.repeat(300)]), { endStream: true }));
    server.receive(encodeHeaders(3, encoder.encode(GET), { endStream: true }));
    expect(seen).toEqual([undefined, GET]);
  });

  it('ends a rapid reset flood (CVE-2023-44487) with ENHANCE_YOUR_CALM, counting only within the window', () => {
    let now = 0;
    const { transport, send, headers, server } = rawServer(
      { maxResetsPerWindow: 50, floodWindowMs: 1000 },
      () => now,
    );
    let id = 1;
    for (let i = 0; i < 50; i++, id += 2) send(headers(id, false), encodeRstStream(id, ErrorCode.CANCEL));
    expect(server.isClosed).toBe(false);
    now = 1000;
    for (let i = 0; i < 50; i++, id += 2) send(headers(id, false), encodeRstStream(id, ErrorCode.CANCEL));
    expect(server.isClosed).toBe(false);
    send(headers(id, false), encodeRstStream(id, ErrorCode.CANCEL));
    expect(transport.goaway()?.code).toBe(ErrorCode.ENHANCE_YOUR_CALM);
  });

  it('counts resets the client provokes (MadeYouReset) as its own: a flood of them ends in ENHANCE_YOUR_CALM', () => {
    const { transport, send, headers, server } = rawServer({ maxResetsPerWindow: 50 });
    let id = 1;
    for (let i = 0; i < 50; i++, id += 2) send(headers(id, false), encodeWindowUpdate(id, 0));
    expect(server.isClosed).toBe(false);
    expect(transport.resets()).toHaveLength(50);
    send(headers(id, false), encodeWindowUpdate(id, 0));
    expect(transport.goaway()?.code).toBe(ErrorCode.ENHANCE_YOUR_CALM);
  });

  it('refuses streams over MAX_CONCURRENT_STREAMS with REFUSED_STREAM', () => {
    const { transport, send, headers, streams } = rawServer({ maxConcurrentStreams: 2 });
    send(headers(1, false), headers(3, false), headers(5, false));
    expect(streams.map((s) => s.id)).toEqual([1, 3]);
    expect(transport.resets()).toEqual([[5, ErrorCode.REFUSED_STREAM]]);
  });

  it('resets a stream whose DATA goes beyond its window with FLOW_CONTROL_ERROR, and no one else', () => {
    const { transport, send, headers, streams, server } = rawServer();
    send(headers(1, false), headers(3, false));
    send(encodeData(1, Buffer.alloc(16_384), false));
    send(encodeData(1, Buffer.alloc(16_384), false));
    send(encodeData(1, Buffer.alloc(16_384), false));
    send(encodeData(1, Buffer.alloc(16_383), false));
    expect(transport.resets()).toEqual([]);
    send(encodeData(1, Buffer.alloc(1), false));
    expect(transport.resets()).toEqual([[1, ErrorCode.FLOW_CONTROL_ERROR]]);
    expect([streams[0]!.closed, streams[1]!.closed, server.isClosed]).toEqual([true, false, false]);
  });

  it('ends the connection on DATA beyond the connection window', () => {
    const { transport, send, headers } = rawServer({
      connectionWindowSize: 65_535,
      initialWindowSize: 1 << 20,
      maxFrameSize: 1 << 17,
    });
    send(headers(1, false));
    send(encodeData(1, Buffer.alloc(65_536), false));
    expect(transport.goaway()?.code).toBe(ErrorCode.FLOW_CONTROL_ERROR);
  });

  it('ends the connection on a window pushed past 2^31-1, resets the stream for a stream window', () => {
    const one = rawServer();
    one.send(one.headers(1, false), encodeWindowUpdate(1, 2 ** 31 - 1));
    expect(one.transport.resets()).toEqual([[1, ErrorCode.FLOW_CONTROL_ERROR]]);
    expect(one.server.isClosed).toBe(false);
    one.send(encodeWindowUpdate(0, 2 ** 31 - 1));
    expect(one.transport.goaway()?.code).toBe(ErrorCode.FLOW_CONTROL_ERROR);
  });

  it('ends a flood of empty DATA frames with ENHANCE_YOUR_CALM', () => {
    const { transport, send, headers, server } = rawServer({ maxEmptyFramesPerWindow: 100 });
    send(headers(1, false));
    for (let i = 0; i < 200 && !server.isClosed; i++) send(encodeData(1, Buffer.alloc(0), false));
    expect(transport.goaway()?.code).toBe(ErrorCode.ENHANCE_YOUR_CALM);
  });

  it('ends a PING flood while the client does not read once the queued control frames are over the cap', () => {
    const { transport, send, server } = rawServer({
      maxQueuedControlFrames: 20,
      maxEmptyFramesPerWindow: 1e9,
    });
    transport.blocked = true;
    send(encodePing(Buffer.alloc(8), false));
    for (let i = 0; i < 100 && !server.isClosed; i++) send(encodePing(Buffer.alloc(8), false));
    expect(server.isClosed).toBe(true);
    expect(transport.goaway()?.code).toBe(ErrorCode.ENHANCE_YOUR_CALM);
    const acks = transport.frames().filter((f) => f.type === FrameType.PING && f.flags & Flag.ACK);
    expect(acks.length).toBeLessThanOrEqual(22);
  });

  it('ends the connection on DATA, WINDOW_UPDATE or RST_STREAM naming an idle stream', () => {
    for (const frame of [
      encodeData(7, Buffer.from('x'), false),
      encodeWindowUpdate(7, 1),
      encodeRstStream(7, ErrorCode.CANCEL),
    ]) {
      const { transport, send } = rawServer();
      send(frame);
      expect(transport.goaway()?.code).toBe(ErrorCode.PROTOCOL_ERROR);
    }
  });

  it('ignores frames in flight on a stream it reset, and keeps HPACK in step with the trailers it ignores', () => {
    const { transport, send, headers, streams, server, encoder } = rawServer();
    send(headers(1, false));
    streams[0]!.reset(ErrorCode.CANCEL);
    send(encodeData(1, Buffer.from('late'), false));
    send(encodeHeaders(1, encoder.encode(['x-trailer', 'kept-in-table']), { endStream: true }));
    send(headers(3, true, [...GET, 'x-trailer', 'kept-in-table']));
    expect(server.isClosed).toBe(false);
    expect(transport.resets()).toEqual([[1, ErrorCode.CANCEL]]);
    expect(streams.map((s) => s.id)).toEqual([1, 3]);
  });

  it('rejects a second header block without END_STREAM on a stream with PROTOCOL_ERROR (stream error)', () => {
    const { transport, send, headers, server } = rawServer();
    send(headers(1, false), headers(1, false));
    expect(transport.resets()).toEqual([[1, ErrorCode.PROTOCOL_ERROR]]);
    expect(server.isClosed).toBe(false);
  });

  it('drains gracefully: GOAWAY with the last stream id, in-flight streams finish, then the transport ends', () => {
    const { transport, send, headers, streams, server } = rawServer();
    send(headers(1, true));
    server.close();
    send(headers(3, true));
    expect(streams.map((s) => s.id)).toEqual([1]);
    expect(transport.goaway()).toEqual(
      expect.objectContaining({ code: ErrorCode.NO_ERROR, lastStreamId: 1 }),
    );
    expect(transport.ended).toBe(false);
    streams[0]!.sendHeaders([':status', '200'], true);
    send();
    expect(transport.ended).toBe(true);
  });

  it('answers SETTINGS with an ACK and applies the peer initial window to its streams', () => {
    const { transport, send, headers, streams } = rawServer();
    send(encodeSettings([[SettingId.INITIAL_WINDOW_SIZE, 10]]), headers(1, true));
    streams[0]!.sendHeaders([':status', '200'], false);
    streams[0]!.sendData(Buffer.alloc(100, 'a'), true);
    send();
    const data = transport.frames().filter((f) => f.type === FrameType.DATA);
    expect(data.map((f) => f.payload.length)).toEqual([10]);
    send(encodeWindowUpdate(1, 90));
    const after = transport.frames().filter((f) => f.type === FrameType.DATA);
    expect(after.map((f) => [f.payload.length, f.flags & Flag.END_STREAM])).toEqual([
      [10, 0],
      [90, Flag.END_STREAM],
    ]);
    const acks = transport.frames().filter((f) => f.type === FrameType.SETTINGS && f.flags & Flag.ACK);
    expect(acks).toHaveLength(2);
  });

  it('decodes its own response blocks with a fresh decoder (HPACK state per connection)', () => {
    const { transport, send, headers, streams } = rawServer();
    send(headers(1, true), headers(3, true));
    streams[0]!.sendHeaders([':status', '200', 'x-a', 'b'], true);
    streams[1]!.sendHeaders([':status', '200', 'x-a', 'b'], true);
    send();
    const decoder = new HpackDecoder({ maxHeaderListSize: 65_536 });
    const blocks = transport.frames().filter((f) => f.type === FrameType.HEADERS);
    expect(blocks.map((f) => decoder.decode(f.payload))).toEqual([
      [':status', '200', 'x-a', 'b'],
      [':status', '200', 'x-a', 'b'],
    ]);
  });

  it('treats GOAWAY from the client as the end once its streams are done', () => {
    const { send, headers, streams, server, ends } = rawServer();
    send(headers(1, true), encodeGoaway(0, ErrorCode.NO_ERROR));
    expect(server.isClosed).toBe(false);
    streams[0]!.sendHeaders([':status', '200'], true);
    send();
    expect(server.isClosed).toBe(true);
    expect(ends).toHaveLength(1);
  });
});
