import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalHeaderName, type EchoServer, startEchoServer } from '../../src/demo/echo/echo-server.ts';
import { parseGoDurationMs } from '../../src/demo/echo/go-duration.ts';
import { send } from './fixtures.ts';

describe('echo server', () => {
  let echo: EchoServer;
  beforeAll(async () => {
    echo = await startEchoServer({
      identity: {
        namespace: 'ns',
        service: 'svc',
        pod: 'svc-0',
        cluster: 'east',
        zone: 'east-1a',
        node: 'n1',
      },
    });
  });
  afterAll(() => echo.close());

  it('describes the request it saw and who it is', async () => {
    const answer = await send(echo.port, '/some/path?q=1', {
      host: 'echo.example.com:8080',
      headers: { 'x-custom': ['a', 'b'] },
    });
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe('application/json');
    const body = answer.echo();
    expect(body).toMatchObject({
      path: '/some/path?q=1',
      host: 'echo.example.com:8080',
      method: 'GET',
      proto: 'HTTP/1.1',
      namespace: 'ns',
      service: 'svc',
      pod: 'svc-0',
      cluster: 'east',
      zone: 'east-1a',
      node: 'n1',
    });
    expect(body.headers['X-Custom']).toEqual(['a', 'b']);
    expect(body.headers.Host).toBeUndefined();
  });

  it('answers /status/NNN with that status and sets requested response headers', async () => {
    const answer = await send(echo.port, '/status/418', {
      headers: { 'x-echo-set-header': 'X-One:1,X-Two:two' },
    });
    expect(answer.status).toBe(418);
    expect(answer.headers['x-one']).toBe('1');
    expect(answer.headers['x-two']).toBe('two');
  });

  it('counts the request body', async () => {
    const answer = await send(echo.port, '/', { method: 'POST', body: 'x'.repeat(1000) });
    expect(answer.echo().bodyBytes).toBe(1000);
  });

  it('reads Go durations and canonical header names', () => {
    expect(parseGoDurationMs('500ms')).toBe(500);
    expect(parseGoDurationMs('1m30s')).toBe(90_000);
    expect(parseGoDurationMs('1.5s')).toBe(1500);
    expect(parseGoDurationMs('0')).toBe(0);
    expect(parseGoDurationMs('soon')).toBeUndefined();
    expect(parseGoDurationMs('5')).toBeUndefined();
    expect(canonicalHeaderName('x-forwarded-FOR')).toBe('X-Forwarded-For');
  });
});
