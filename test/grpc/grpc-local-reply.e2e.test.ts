import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import {
  grpcStatusForHttp,
  grpcTimeoutMs,
  isGrpcRequest,
} from '../../src/proxy/exchange/grpc-local-reply.ts';

function req(headers: Record<string, string>): IncomingMessage {
  return { headers } as unknown as IncomingMessage;
}

describe('gRPC answers of the gateway', () => {
  it('tells gRPC requests by content-type', () => {
    expect(isGrpcRequest(req({ 'content-type': 'application/grpc' }))).toBe(true);
    expect(isGrpcRequest(req({ 'content-type': 'application/grpc+proto' }))).toBe(true);
    expect(isGrpcRequest(req({ 'content-type': 'application/json' }))).toBe(false);
    expect(isGrpcRequest(req({}))).toBe(false);
  });

  it('maps its own HTTP statuses to gRPC codes', () => {
    expect(grpcStatusForHttp(404)).toBe(12); // no route: UNIMPLEMENTED
    expect(grpcStatusForHttp(503)).toBe(14); // no endpoint: UNAVAILABLE
    expect(grpcStatusForHttp(502)).toBe(14);
    expect(grpcStatusForHttp(504)).toBe(4); // timeout: DEADLINE_EXCEEDED
    expect(grpcStatusForHttp(403)).toBe(7);
    expect(grpcStatusForHttp(500)).toBe(13);
    expect(grpcStatusForHttp(418)).toBe(2);
  });

  it('reads grpc-timeout in every unit and ignores malformed values', () => {
    expect(grpcTimeoutMs('2S')).toBe(2000);
    expect(grpcTimeoutMs('1H')).toBe(3_600_000);
    expect(grpcTimeoutMs('3M')).toBe(180_000);
    expect(grpcTimeoutMs('250m')).toBe(250);
    expect(grpcTimeoutMs('1500u')).toBe(2);
    expect(grpcTimeoutMs('5n')).toBe(1);
    for (const bad of ['', 'S', '10', '10x', '-1S', '123456789S', '1.5S']) {
      expect(grpcTimeoutMs(bad)).toBeUndefined();
    }
    expect(grpcTimeoutMs(undefined)).toBeUndefined();
  });
});
