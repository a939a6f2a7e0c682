import { describe, expect, it } from 'vitest';
import { RequestBudget } from '../../src/limits/request-budget.js';

describe('RequestBudget', () => {
  it('paces requests 1/N s apart, with no burst beyond one request', async () => {
    let now = 0;
    const budget = new RequestBudget(2, () => now);
    await budget.acquire();
    expect(budget.available()).toBe(0);
    expect(budget.waitEstimateMs()).toBe(500);
    now += 250;
    expect(budget.available()).toBeCloseTo(0.5);
    now += 250;
    await budget.acquire();
    now += 10_000;
    // Idle time does not accumulate into a burst.
    expect(budget.available()).toBe(1);
  });

  it('never exceeds its rate over real time (6 acquisitions at 5/s take >= 1 s)', async () => {
    const budget = new RequestBudget(5);
    const start = performance.now();
    for (let i = 0; i < 6; i += 1) await budget.acquire();
    // One at once, then one every 200 ms.
    expect(performance.now() - start).toBeGreaterThanOrEqual(990);
  });

  it('rejects a waiter when its signal aborts, and serves the next waiter', async () => {
    const budget = new RequestBudget(1);
    await budget.acquire();
    const controller = new AbortController();
    const aborted = budget.acquire(controller.signal);
    controller.abort();
    await expect(aborted).rejects.toThrow();
    await expect(budget.acquire(AbortSignal.timeout(5_000))).resolves.toBeUndefined();
  });
});
