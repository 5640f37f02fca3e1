import { AsyncResource } from 'node:async_hooks';

type Bind = (this: AsyncResource, fn: (...args: unknown[]) => unknown, thisArg?: unknown) => unknown;

/**
 * Node 20's `AsyncResource.prototype.bind` builds two deprecation wrappers (the DEP0172 getter and setter of the
 * bound function's `asyncResource` property, each with a prototype object) on every call, and node:http2's
 * `ClientHttp2Session.request()` calls it once per stream: in a gRPC profile (bench/README.md) that was 10% of
 * the bytes allocated per call and 7.6% of the CPU. This puts an equivalent in its place: the same scope, `this`,
 * arguments and `length`, and `asyncResource` as a plain property (reading it no longer warns). Only where the
 * running Node still wraps it; true when replaced.
 */
export function leanAsyncResourceBind(): boolean {
  const probe = new AsyncResource('lean-bind-probe').bind(() => {});
  if (Object.getOwnPropertyDescriptor(probe, 'asyncResource')?.get === undefined) return false;
  const prototype = AsyncResource.prototype as unknown as { bind: Bind };
  const nodeBind = prototype.bind;
  prototype.bind = function bind(this: AsyncResource, fn, thisArg) {
    // Node's own checks and errors for what is not a function.
    if (typeof fn !== 'function') return nodeBind.call(this, fn, thisArg);
    const resource = this;
    const bound =
      thisArg === undefined
        ? function (this: unknown, ...args: unknown[]): unknown {
            return resource.runInAsyncScope(fn, this, ...args);
          }
        : resource.runInAsyncScope.bind(resource, fn, thisArg);
    Object.defineProperty(bound, 'length', { configurable: true, value: fn.length });
    Object.defineProperty(bound, 'asyncResource', {
      configurable: true,
      enumerable: true,
      writable: true,
      value: resource,
    });
    return bound;
  };
  return true;
}
