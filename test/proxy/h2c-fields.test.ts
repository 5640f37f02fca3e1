import { describe, expect, it } from 'vitest';
import {
  hasForbiddenByte,
  regularFields,
  requestFields,
  responseStatus,
} from '../../src/proxy/upstream/h2c-fields.ts';

describe('h2c request fields for the js HTTP/2 codec', () => {
  it('puts the pseudo-headers first, te: trailers after them, then the headers lower-cased, repeated ones apart', () => {
    const fields = requestFields(
      {
        method: 'POST',
        path: '/greet.Greeter/SayHello',
        headers: ['Content-Type', 'application/grpc', 'X-Tag', 'a', 'x-tag', 'b', 'Cookie', 'c=1'],
      },
      '10.0.0.1:50051',
    );
    expect(fields).toEqual([
      ':method',
      'POST',
      ':scheme',
      'http',
      ':authority',
      '10.0.0.1:50051',
      ':path',
      '/greet.Greeter/SayHello',
      'te',
      'trailers',
      'content-type',
      'application/grpc',
      'x-tag',
      'a',
      'x-tag',
      'b',
      'cookie',
      'c=1',
    ]);
  });

  it('sends Host as :authority and drops the connection-specific headers HTTP/2 forbids', () => {
    const fields = requestFields(
      {
        method: 'GET',
        path: '/',
        headers: {
          host: 'api.example.com',
          connection: 'keep-alive',
          'keep-alive': 'timeout=5',
          'transfer-encoding': 'chunked',
          upgrade: 'h2c',
          te: 'gzip',
          accept: ['text/plain', 'text/html'],
        },
      },
      '10.0.0.1:80',
    );
    expect(fields.slice(4, 6)).toEqual([':authority', 'api.example.com']);
    expect(fields.slice(8)).toEqual(['te', 'trailers', 'accept', 'text/plain', 'accept', 'text/html']);
  });

  it('finds the bytes no field may carry', () => {
    expect(hasForbiddenByte(['x-a', 'fine value'])).toBe(false);
    expect(hasForbiddenByte(['x-a', 'line\r\nx-injected: 1'])).toBe(true);
    expect(hasForbiddenByte(['x-a', 'nul\0'])).toBe(true);
  });
});

describe('h2c response fields', () => {
  it('reads a :status of three digits', () => {
    expect(responseStatus([':status', '200', 'content-type', 'application/grpc'])).toBe(200);
    expect(responseStatus([':status', '103'])).toBe(103);
  });

  it('gives 0 for a missing, repeated or malformed :status', () => {
    expect(responseStatus(['content-type', 'text/plain'])).toBe(0);
    expect(responseStatus([':status', '200', ':status', '204'])).toBe(0);
    expect(responseStatus([':status', '2e2'])).toBe(0);
    expect(responseStatus([':status', '20'])).toBe(0);
    expect(responseStatus([':status', '099'])).toBe(0);
    expect(responseStatus([':path', '/', ':status', '200'])).toBe(0);
  });

  it('hands the handlers the fields without the pseudo-headers', () => {
    expect(regularFields([':status', '200', 'grpc-status', '0'])).toEqual(['grpc-status', '0']);
    const none = ['grpc-status', '0'];
    expect(regularFields(none)).toBe(none);
  });
});
