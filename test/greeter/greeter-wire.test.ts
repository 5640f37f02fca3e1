import { describe, expect, it } from 'vitest';
import {
  decodeHelloReply,
  decodeHelloRequest,
  encodeHelloReply,
  encodeHelloRequest,
} from '../../src/demo/greeter/greeter-messages.ts';
import { encodeGrpcFrame, GrpcFrameError, GrpcFrameReader } from '../../src/demo/greeter/grpc-frames.ts';
import {
  decodeGrpcMessage,
  describeGrpcStatus,
  encodeGrpcMessage,
} from '../../src/demo/greeter/grpc-status.ts';
import { decodeStringFields, ProtobufError } from '../../src/demo/greeter/protobuf-strings.ts';

/** The demo's hand-written gRPC wire format, against bytes as protoc-generated code writes them. */
describe('protobuf string fields', () => {
  it('encodes as the protobuf encoding guide shows: tag, varint length, UTF-8', () => {
    expect(encodeHelloRequest({ name: 'hi' }).toString('hex')).toBe('0a026869');
    // A length of 300 takes two varint bytes: 0xac 0x02.
    expect(
      encodeHelloRequest({ name: 'x'.repeat(300) })
        .subarray(0, 3)
        .toString('hex'),
    ).toBe('0aac02');
    // proto3 leaves empty strings off the wire.
    expect(encodeHelloRequest({ name: '' }).length).toBe(0);
  });

  it('round-trips a reply, non-ASCII text included', () => {
    const reply = { message: 'hello ünïcode', pod: 'p-1', cluster: 'east-1', zone: 'us-east-1a' };
    expect(decodeHelloReply(encodeHelloReply(reply))).toEqual(reply);
    expect(decodeHelloReply(Buffer.alloc(0))).toEqual({ message: '', pod: '', cluster: '', zone: '' });
  });

  it('skips fields of other wire types, as unknown fields, and keeps the last of a repeated string', () => {
    const bytes = Buffer.from(
      [
        '289601', // field 5, varint 150
        '3501020304', // field 6, fixed32
        '390102030405060708', // field 7, fixed64
        '0a0161', // field 1 = "a"
        '0a0162', // field 1 = "b": the last one wins
      ].join(''),
      'hex',
    );
    expect(decodeHelloRequest(bytes)).toEqual({ name: 'b' });
  });

  it('refuses truncated input with a stable code', () => {
    for (const hex of ['0a05686921', '0a', '28ff', '0b']) {
      expect(() => decodeStringFields(Buffer.from(hex, 'hex')), hex).toThrow(ProtobufError);
    }
    expect(() => decodeStringFields(Buffer.from('0a05', 'hex'))).toThrow(
      expect.objectContaining({ code: 'ERR_PROTOBUF' }),
    );
  });
});

describe('gRPC length-prefixed frames', () => {
  it('prefixes a flag byte and a big-endian length', () => {
    expect(encodeGrpcFrame(Buffer.from('hi')).toString('hex')).toBe('00000000026869');
  });

  it('reads frames split across chunks and several in one chunk', () => {
    const two = Buffer.concat([encodeGrpcFrame(Buffer.from('one')), encodeGrpcFrame(Buffer.from('two'))]);
    const reader = new GrpcFrameReader();
    const seen: string[] = [];
    // Inside the first header, inside the first message, across the boundary, the rest.
    for (const [start, end] of [
      [0, 2],
      [2, 6],
      [6, 9],
      [9, two.length],
    ] as const) {
      for (const message of reader.push(two.subarray(start, end))) seen.push(message.toString());
    }
    expect(seen).toEqual(['one', 'two']);
    expect(reader.partial).toBe(false);
    reader.push(two.subarray(0, 4));
    expect(reader.partial).toBe(true);
  });

  it('refuses compressed and oversized frames', () => {
    expect(() => new GrpcFrameReader().push(Buffer.from('0100000000', 'hex'))).toThrow(GrpcFrameError);
    expect(() => new GrpcFrameReader().push(Buffer.from('00ffffffff', 'hex'))).toThrow(/over the limit/);
  });
});

describe('grpc-status and grpc-message', () => {
  it('percent-encodes the message as PROTOCOL-HTTP2.md asks, and decodes it back', () => {
    expect(encodeGrpcMessage('ünï 100%')).toBe('%C3%BCn%C3%AF 100%25');
    expect(decodeGrpcMessage('%C3%BCn%C3%AF 100%25')).toBe('ünï 100%');
    // A malformed escape stays as sent.
    expect(decodeGrpcMessage('50%x')).toBe('50%x');
  });

  it('names the codes', () => {
    expect(describeGrpcStatus(14)).toBe('14 UNAVAILABLE');
    expect(describeGrpcStatus(0)).toBe('0 OK');
    expect(describeGrpcStatus(99)).toBe('99');
  });
});
