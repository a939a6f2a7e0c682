import { describe, expect, it } from 'vitest';
import { RequestBudget } from '../../src/limits/request-budget.js';

describe('RequestBudget', () => {
  it('allows a burst of one second worth, then paces requests at the configured rate', async () => {
    let now = 0;
    const budget = new RequestBudget(2, () => now);
    await budget.acquire();
    await budget.acquire();
    expect(budget.available()).toBeLessThan(1);
    expect(budget.waitEstimateMs()).toBe(500);
    now += 500;
    expect(budget.available()).toBeCloseTo(1);
    await budget.acquire();
    expect(budget.available()).toBeCloseTo(0);
  });

  it('never exceeds its rate over a real second (10 acquisitions at 5/s take >= 1 s)', async () => {
    const budget = new RequestBudget(5);
    const start = performance.now();
    for (let i = 0; i < 10; i += 1) await budget.acquire();
    // 5 from the initial burst, 5 more need 1 s of refill.
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
