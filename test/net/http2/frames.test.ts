import { describe, expect, it } from 'vitest';
import {
  applySettings,
  ErrorCode,
  encodeData,
  encodeFrame,
  encodeGoaway,
  encodeHeaders,
  encodePing,
  encodePriority,
  encodePushPromise,
  encodeRstStream,
  encodeSettings,
  encodeWindowUpdate,
  Flag,
  type Frame,
  FrameReader,
  FrameType,
  Http2ProtocolError,
  initialSettings,
  readGoaway,
  readPushPromise,
  readRstStreamCode,
  readWindowIncrement,
  SettingId,
} from '../../../src/net/http2/frames.ts';

interface Seen {
  type: number;
  flags: number;
  streamId: number;
  payload: string;
  wireLength: number;
  dependsOn: number;
  view: Buffer;
}

function readAll(reader: FrameReader, chunks: Buffer[]): Seen[] {
  const seen: Seen[] = [];
  const onFrame = (f: Frame) =>
    seen.push({
      type: f.type,
      flags: f.flags,
      streamId: f.streamId,
      payload: f.payload.toString('latin1'),
      wireLength: f.wireLength,
      dependsOn: f.dependsOn,
      view: f.payload,
    });
  for (const chunk of chunks) reader.push(chunk, onFrame);
  return seen;
}

function protocolError(run: () => void): Http2ProtocolError {
  try {
    run();
  } catch (error) {
    if (error instanceof Http2ProtocolError) return error;
    throw error;
  }
  throw new Error('no Http2ProtocolError thrown');
}

const sample = Buffer.concat([
  encodeSettings([[SettingId.MAX_CONCURRENT_STREAMS, 100]]),
  encodeHeaders(1, Buffer.from('block-one'), { endStream: false }),
  encodeData(1, Buffer.from('hello'), false, 3),
  encodeData(1, Buffer.alloc(0), true),
  encodeHeaders(3, Buffer.from('block-two'), { endStream: true, padLength: 2, dependsOn: 1 }),
  encodePing(Buffer.from('12345678'), true),
  encodeWindowUpdate(0, 1000),
  encodeRstStream(3, ErrorCode.CANCEL),
  encodeGoaway(3, ErrorCode.NO_ERROR, Buffer.from('bye')),
]);

const expected = [
  { type: FrameType.SETTINGS, streamId: 0, wireLength: 6 },
  { type: FrameType.HEADERS, streamId: 1, payload: 'block-one', flags: Flag.END_HEADERS },
  { type: FrameType.DATA, streamId: 1, payload: 'hello', wireLength: 1 + 5 + 3, flags: Flag.PADDED },
  { type: FrameType.DATA, streamId: 1, payload: '', flags: Flag.END_STREAM },
  { type: FrameType.HEADERS, streamId: 3, payload: 'block-two', dependsOn: 1 },
  { type: FrameType.PING, payload: '12345678', flags: Flag.ACK },
  { type: FrameType.WINDOW_UPDATE, streamId: 0 },
  { type: FrameType.RST_STREAM, streamId: 3 },
  { type: FrameType.GOAWAY, streamId: 0 },
];

describe('FrameReader', () => {
  it('reads every frame type written by the writers, padding and priority stripped', () => {
    const seen = readAll(new FrameReader(), [sample]);
    expect(seen).toHaveLength(expected.length);
    for (const [i, frame] of seen.entries()) expect(frame).toMatchObject(expected[i]!);
    expect(seen[4]!.flags & (Flag.END_STREAM | Flag.PADDED | Flag.PRIORITY | Flag.END_HEADERS)).toBe(
      Flag.END_STREAM | Flag.PADDED | Flag.PRIORITY | Flag.END_HEADERS,
    );
    expect(readWindowIncrement(seen[6]!.view)).toBe(1000);
    expect(readRstStreamCode(seen[7]!.view)).toBe(ErrorCode.CANCEL);
    const goaway = readGoaway(seen[8]!.view);
    expect([goaway.lastStreamId, goaway.code, goaway.debug.toString()]).toEqual([3, 0, 'bye']);
  });

  it('reads the same frames at every split point and one byte at a time', () => {
    const whole = readAll(new FrameReader(), [sample]).map(({ view: _, ...rest }) => rest);
    for (let cut = 1; cut < sample.length; cut++) {
      const split = readAll(new FrameReader(), [sample.subarray(0, cut), sample.subarray(cut)]);
      expect(split.map(({ view: _, ...rest }) => rest)).toEqual(whole);
    }
    const bytes = [...sample].map((byte) => Buffer.from([byte]));
    expect(readAll(new FrameReader(), bytes).map(({ view: _, ...rest }) => rest)).toEqual(whole);
  });

  it('gives a view of the chunk, not a copy, when the frame is inside one chunk', () => {
    const chunk = encodeData(5, Buffer.from('payload'), false);
    const [frame] = readAll(new FrameReader(), [chunk]);
    expect(frame!.view.buffer).toBe(chunk.buffer);
    expect(frame!.view.byteOffset).toBe(chunk.byteOffset + 9);
  });

  it('keeps a spanning payload valid after the callback', () => {
    const chunk = encodeData(5, Buffer.from('payload'), false);
    const reader = new FrameReader();
    const [frame] = readAll(reader, [chunk.subarray(0, 12), chunk.subarray(12)]);
    readAll(reader, [encodeData(5, Buffer.from('overwrite'), false)]);
    expect(frame!.view.toString()).toBe('payload');
  });

  it('reports idle only between frames', () => {
    const reader = new FrameReader();
    const frame = encodePing(Buffer.alloc(8), false);
    reader.push(frame.subarray(0, 4), () => {});
    expect(reader.idle).toBe(false);
    reader.push(frame.subarray(4, 12), () => {});
    expect(reader.idle).toBe(false);
    reader.push(frame.subarray(12), () => {});
    expect(reader.idle).toBe(true);
  });

  it('refuses a frame over the maximum frame size with a connection FRAME_SIZE_ERROR, before its payload', () => {
    const reader = new FrameReader({ maxFrameSize: 16_384 });
    const big = encodeData(1, Buffer.alloc(16_385), false);
    const error = protocolError(() => reader.push(big.subarray(0, 9), () => {}));
    expect([error.code, error.streamId]).toEqual([ErrorCode.FRAME_SIZE_ERROR, 0]);
    const raised = new FrameReader({ maxFrameSize: 16_384 });
    raised.setMaxFrameSize(20_000);
    expect(readAll(raised, [big])).toHaveLength(1);
  });

  it.each([
    ['DATA on stream 0', encodeData(0, Buffer.from('x'), false), ErrorCode.PROTOCOL_ERROR, 0],
    [
      'HEADERS on stream 0',
      encodeHeaders(0, Buffer.from('x'), { endStream: false }),
      ErrorCode.PROTOCOL_ERROR,
      0,
    ],
    ['padding longer than the payload', paddedBeyond(), ErrorCode.PROTOCOL_ERROR, 0],
    ['SETTINGS on a stream', encodeFrame(FrameType.SETTINGS, 0, 1), ErrorCode.PROTOCOL_ERROR, 0],
    [
      'SETTINGS length 5',
      encodeFrame(FrameType.SETTINGS, 0, 0, Buffer.alloc(5)),
      ErrorCode.FRAME_SIZE_ERROR,
      0,
    ],
    ['SETTINGS ACK with payload', encodeFrame(FrameType.SETTINGS, Flag.ACK, 0, Buffer.alloc(6)), 6, 0],
    ['PING of 7 bytes', encodeFrame(FrameType.PING, 0, 0, Buffer.alloc(7)), ErrorCode.FRAME_SIZE_ERROR, 0],
    ['PING on a stream', encodeFrame(FrameType.PING, 0, 1, Buffer.alloc(8)), ErrorCode.PROTOCOL_ERROR, 0],
    [
      'GOAWAY of 7 bytes',
      encodeFrame(FrameType.GOAWAY, 0, 0, Buffer.alloc(7)),
      ErrorCode.FRAME_SIZE_ERROR,
      0,
    ],
    ['WINDOW_UPDATE of 5', encodeFrame(FrameType.WINDOW_UPDATE, 0, 1, Buffer.alloc(5)), 6, 0],
    ['RST_STREAM on 0', encodeRstStream(0, 0), ErrorCode.PROTOCOL_ERROR, 0],
    ['CONTINUATION on 0', encodeFrame(FrameType.CONTINUATION, 0, 0), ErrorCode.PROTOCOL_ERROR, 0],
  ])('refuses %s', (_name, bytes, code, streamId) => {
    const error = protocolError(() => new FrameReader().push(bytes, () => {}));
    expect([error.code, error.streamId]).toEqual([code, streamId]);
  });

  it('delivers unknown frame types (to be ignored by the connection) and PRIORITY with its dependency', () => {
    const seen = readAll(new FrameReader(), [
      encodeFrame(0xfa, 0xff, 7, Buffer.from('ext')),
      encodePriority(9, 7, 200, true),
    ]);
    expect(seen.map((f) => [f.type, f.streamId, f.dependsOn])).toEqual([
      [0xfa, 7, -1],
      [FrameType.PRIORITY, 9, 7],
    ]);
  });

  it('delivers a PRIORITY of the wrong length (a stream error for the connection) without a dependency', () => {
    const seen = readAll(new FrameReader(), [encodeFrame(FrameType.PRIORITY, 0, 3, Buffer.alloc(4))]);
    expect(seen.map((f) => [f.type, f.streamId, f.wireLength, f.dependsOn])).toEqual([
      [FrameType.PRIORITY, 3, 4, -1],
    ]);
  });

  it('reads PUSH_PROMISE', () => {
    const [frame] = readAll(new FrameReader(), [encodePushPromise(1, 2, Buffer.from('blk'))]);
    const promise = readPushPromise(frame!.view);
    expect([promise.promisedId, promise.fragment.toString()]).toEqual([2, 'blk']);
  });
});

function paddedBeyond(): Buffer {
  // PADDED DATA whose Pad Length (10) is more than the 3 octets after it.
  return encodeFrame(FrameType.DATA, Flag.PADDED, 1, Buffer.from([10, 1, 2, 3]));
}

describe('encodeHeaders', () => {
  it('splits a block over the maximum frame size into HEADERS and CONTINUATION, END_HEADERS on the last', () => {
    const block = Buffer.alloc(40_000, 'h');
    const seen = readAll(new FrameReader(), [
      encodeHeaders(1, block, { endStream: true, maxFrameSize: 16_384 }),
    ]);
    expect(seen.map((f) => [f.type, f.flags, f.payload.length])).toEqual([
      [FrameType.HEADERS, Flag.END_STREAM, 16_384],
      [FrameType.CONTINUATION, 0, 16_384],
      [FrameType.CONTINUATION, Flag.END_HEADERS, 40_000 - 2 * 16_384],
    ]);
  });

  it('keeps a block of exactly the frame size in one HEADERS frame', () => {
    const seen = readAll(new FrameReader(), [
      encodeHeaders(1, Buffer.alloc(16_384), { endStream: false, maxFrameSize: 16_384 }),
    ]);
    expect(seen.map((f) => [f.type, f.flags])).toEqual([[FrameType.HEADERS, Flag.END_HEADERS]]);
  });
});

describe('SETTINGS', () => {
  function settingsPayload(entries: [number, number][]): Buffer {
    return encodeSettings(entries).subarray(9);
  }

  it('applies known values in order and ignores unknown identifiers', () => {
    const settings = initialSettings();
    applySettings(
      settings,
      settingsPayload([
        [SettingId.HEADER_TABLE_SIZE, 0],
        [SettingId.ENABLE_PUSH, 0],
        [SettingId.MAX_CONCURRENT_STREAMS, 10],
        [SettingId.INITIAL_WINDOW_SIZE, 1],
        [SettingId.INITIAL_WINDOW_SIZE, 2 ** 31 - 1],
        [SettingId.MAX_FRAME_SIZE, 2 ** 24 - 1],
        [SettingId.MAX_HEADER_LIST_SIZE, 8192],
        [SettingId.ENABLE_CONNECT_PROTOCOL, 1],
        [0x99, 12345],
      ]),
    );
    expect(settings).toEqual({
      headerTableSize: 0,
      enablePush: false,
      maxConcurrentStreams: 10,
      initialWindowSize: 2 ** 31 - 1,
      maxFrameSize: 2 ** 24 - 1,
      maxHeaderListSize: 8192,
      enableConnectProtocol: true,
    });
  });

  it.each([
    ['ENABLE_PUSH 2', SettingId.ENABLE_PUSH, 2, ErrorCode.PROTOCOL_ERROR],
    ['INITIAL_WINDOW_SIZE 2^31', SettingId.INITIAL_WINDOW_SIZE, 2 ** 31, ErrorCode.FLOW_CONTROL_ERROR],
    ['MAX_FRAME_SIZE 16383', SettingId.MAX_FRAME_SIZE, 16_383, ErrorCode.PROTOCOL_ERROR],
    ['MAX_FRAME_SIZE 2^24', SettingId.MAX_FRAME_SIZE, 2 ** 24, ErrorCode.PROTOCOL_ERROR],
    ['ENABLE_CONNECT_PROTOCOL 2', SettingId.ENABLE_CONNECT_PROTOCOL, 2, ErrorCode.PROTOCOL_ERROR],
  ])('refuses %s as a connection error', (_name, id, value, code) => {
    const error = protocolError(() => applySettings(initialSettings(), settingsPayload([[id, value]])));
    expect([error.code, error.streamId]).toEqual([code, 0]);
  });

  it('writes an ACK with no payload', () => {
    const [frame] = readAll(new FrameReader(), [encodeSettings()]);
    expect([frame!.type, frame!.flags, frame!.wireLength]).toEqual([FrameType.SETTINGS, Flag.ACK, 0]);
  });
});
