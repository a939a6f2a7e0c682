import { describe, expect, it } from 'vitest';
import { REFILL_HEADROOM, RequestBudget } from '../../src/limits/request-budget.js';

/** A budget on a hand-driven clock; `takeAt` moves the clock and takes a token without waiting. */
function manualBudget(perSecond: number) {
  let now = 0;
  const budget = new RequestBudget(perSecond, () => now);
  return {
    budget,
    /** Advances to `t`, waits (on the hand clock) as long as the budget asks, takes the token. */
    async takeAt(t: number): Promise<number> {
      now = Math.max(now, t);
      const wait = budget.waitEstimateMs();
      now += wait;
      await budget.acquire();
      return wait;
    },
  };
}

describe('RequestBudget', () => {
  it('paces requests 1/(N × 1.01) s apart, with no burst beyond one request', async () => {
    let now = 0;
    const budget = new RequestBudget(2, () => now);
    await budget.acquire();
    expect(budget.available()).toBe(0);
    expect(budget.waitEstimateMs()).toBeCloseTo(1000 / (2 * (1 + REFILL_HEADROOM)), 9);
    now += 250;
    expect(budget.available()).toBeCloseTo(0.25 * 2 * (1 + REFILL_HEADROOM), 9);
    now += 250;
    await budget.acquire();
    now += 10_000;
    // Idle time does not accumulate into a burst.
    expect(budget.available()).toBe(1);
  });

  it('lets a schedule that uses the whole budget run on time, without waiting', async () => {
    const { takeAt } = manualBudget(1);
    const waits: number[] = [];
    for (let i = 0; i < 600; i += 1) waits.push(await takeAt(i * 1000));
    expect(waits.every((w) => w === 0)).toBe(true);
  });

  it('catches up after one late request instead of carrying its lateness forever', async () => {
    // 1 s pings at a budget of 1/s; the third fires 30 ms late (a GC pause, say).
    const { takeAt } = manualBudget(1);
    const rate = (1 + REFILL_HEADROOM) / 1000; // tokens per ms
    await takeAt(0);
    await takeAt(1000);
    await takeAt(2030);
    const lateness: number[] = [];
    let sentAt = 2030;
    for (let i = 3; i < 10; i += 1) {
      const wait = await takeAt(i * 1000);
      // The exact arithmetic: the deficit at the due time over the refill rate, nothing rounded.
      const expected = Math.max(0, (1 - (i * 1000 - sentAt) * rate) / rate);
      expect(wait).toBeCloseTo(expected, 9);
      sentAt = i * 1000 + wait;
      lateness.push(wait);
    }
    // 1% headroom at 1/s recovers ~10 ms a second: 30 ms late is caught up within 4 requests.
    expect(lateness[0]).toBeCloseTo(20.1, 1);
    expect(lateness.slice(3)).toEqual([0, 0, 0, 0]);
    expect(lateness).toEqual([...lateness].sort((a, b) => b - a));
  });

  it('never lets more than 1 + 1.01·N·T requests through in T seconds', async () => {
    let now = 0;
    const budget = new RequestBudget(10, () => now);
    let taken = 0;
    // Ask far more often than the budget allows, for 10 s of hand-driven time.
    for (now = 0; now < 10_000; now += 7) {
      if (budget.waitEstimateMs() === 0) {
        await budget.acquire();
        taken += 1;
      }
    }
    expect(taken).toBeLessThanOrEqual(1 + 10 * (1 + REFILL_HEADROOM) * 10);
    // Asking only every 7 ms loses up to 7 ms per token, so not every token is used.
    expect(taken).toBeGreaterThanOrEqual(90);
  });

  it('never exceeds its rate over real time (6 acquisitions at 5/s take >= 5 refills)', async () => {
    const budget = new RequestBudget(5);
    const start = performance.now();
    for (let i = 0; i < 6; i += 1) await budget.acquire();
    // One at once, then one every 198 ms (200 ms less the headroom).
    expect(performance.now() - start).toBeGreaterThanOrEqual((5 * 1000) / (5 * 1.01));
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
