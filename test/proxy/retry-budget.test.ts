import { describe, expect, it } from 'vitest';
import { RetryBudget } from '../../src/proxy/compile/retry-budget.ts';

/** Envoy's retry budget arithmetic: retries in flight ≤ max(minConcurrency, percent × requests in flight). */
describe('retry budget', () => {
  it('admits the minimum whatever the load, then the percent of requests in flight', () => {
    const budget = new RetryBudget({ percent: 20, minConcurrency: 3, source: 'flags' });
    budget.activeRequests = 10;
    expect([budget.admit(), budget.admit(), budget.admit(), budget.admit()]).toEqual([
      true,
      true,
      true,
      false,
    ]);
    expect(budget.describe()).toMatchObject({ activeRequests: 10, activeRetries: 3, exhausted: 1 });
    budget.activeRequests = 100;
    for (let i = 0; i < 17; i++) expect(budget.admit()).toBe(true);
    expect(budget.admit()).toBe(false);
    expect(budget.activeRetries).toBe(20);
    expect(budget.exhausted).toBe(2);
  });

  it('admits again once retries end', () => {
    const budget = new RetryBudget({ percent: 0, minConcurrency: 1, source: 'XBackendTrafficPolicy/shop/p' });
    budget.activeRequests = 50;
    expect(budget.admit()).toBe(true);
    expect(budget.admit()).toBe(false);
    budget.activeRetries--;
    expect(budget.admit()).toBe(true);
  });
});
