import * as undici from 'undici';
import { describe, expect, it } from 'vitest';
import { buildConnector, Client, errors, Pool } from '../../src/proxy/undici-parts.ts';

describe('undici parts', () => {
  // The proxy loads these from undici's own files to skip the rest of its index; an undici version that moves
  // or replaces them must fail here rather than run a different class.
  it('are the classes and functions undici exports', () => {
    expect(Pool).toBe(undici.Pool);
    expect(Client).toBe(undici.Client);
    expect(buildConnector).toBe(undici.buildConnector);
    expect(errors).toBe(undici.errors);
    expect(new errors.ClientClosedError()).toBeInstanceOf(undici.errors.UndiciError);
  });
});
