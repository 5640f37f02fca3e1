import { AsyncLocalStorage, AsyncResource, executionAsyncId } from 'node:async_hooks';
import { describe, expect, it } from 'vitest';
import { leanAsyncResourceBind } from '../../src/app/lean-async-bind.ts';

describe('the lean AsyncResource.bind', () => {
  leanAsyncResourceBind();

  it('runs the function in the resource scope, with its this, arguments and length', () => {
    const storage = new AsyncLocalStorage<string>();
    const resource = storage.run('bound here', () => new AsyncResource('test'));
    const bound = resource.bind(function (this: unknown, a: number, b: number) {
      return { sum: a + b, self: this, id: executionAsyncId(), store: storage.getStore() };
    });
    const self = { me: true };
    const result = bound.call(self, 2, 3);
    expect(result).toEqual({ sum: 5, self, id: resource.asyncId(), store: 'bound here' });
    expect(bound.length).toBe(2);
    expect((bound as unknown as { asyncResource: AsyncResource }).asyncResource).toBe(resource);
  });

  it('keeps a given this, and the static bind', () => {
    const self = { me: 1 };
    const resource = new AsyncResource('test') as unknown as {
      bind(fn: () => unknown, thisArg: unknown): () => unknown;
    };
    const bound = resource.bind(function (this: unknown) {
      return this;
    }, self);
    expect(bound.call({ other: true })).toBe(self);
    const staticBound = AsyncResource.bind((x: number) => x * 2);
    expect(staticBound(21)).toBe(42);
  });

  it('throws as Node does for what is not a function', () => {
    expect(() => new AsyncResource('test').bind(42 as unknown as () => void)).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_ARG_TYPE' }),
    );
  });

  it('replaces it once: a second call finds nothing to replace', () => {
    expect(leanAsyncResourceBind()).toBe(false);
  });
});
