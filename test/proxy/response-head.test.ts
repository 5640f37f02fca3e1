import { describe, expect, it } from 'vitest';
import type { CompiledCors } from '../../src/proxy/compile/cors.ts';
import { compileHeaderMod } from '../../src/proxy/compile/header-ops.ts';
import { relayedResponseHeaders } from '../../src/proxy/exchange/response-head.ts';

const raw = (...pairs: string[]): Buffer[] => pairs.map((s) => Buffer.from(s, 'latin1'));

const cors: CompiledCors = {
  allowOrigin: (origin) => origin,
  preflightHeaders: () => [],
  responseHeaders: (origin) => ['access-control-allow-origin', origin],
};

describe('relayedResponseHeaders', () => {
  it('drops hop-by-hop headers and the names Connection lists, keeping the rest as sent', () => {
    const headers = relayedResponseHeaders(
      raw(
        'Content-Type',
        'text/plain',
        'Connection',
        'keep-alive, X-Hop',
        'Keep-Alive',
        'timeout=5',
        'X-Hop',
        '1',
        'X-Kept',
        'é',
      ),
      [],
      undefined,
      undefined,
    );
    expect(headers).toEqual(['Content-Type', 'text/plain', 'X-Kept', 'é']);
  });

  it('runs the response header modifiers, then adds CORS headers for an allowed origin', () => {
    const mods = [compileHeaderMod({ set: [{ name: 'x-set', value: 'v' }], add: [], remove: ['server'] })];
    const headers = relayedResponseHeaders(
      raw('Server', 'nginx', 'X-Set', 'old'),
      mods,
      cors,
      'https://a.example',
    );
    expect(headers).toEqual(['x-set', 'v', 'access-control-allow-origin', 'https://a.example']);
  });

  it('adds no CORS headers without an allowed origin', () => {
    expect(relayedResponseHeaders(raw('A', '1'), [], cors, undefined)).toEqual(['A', '1']);
  });
});
