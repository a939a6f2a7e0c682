import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  REFILL_HEADROOM,
  RESERVATION_GRACE_MS,
  RequestBudget,
  type BudgetPriority,
} from '../../src/limits/request-budget.js';

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
    // Served at the next refill (1 s); no wall-clock deadline of its own to miss when busy.
    await expect(budget.acquire()).resolves.toBeUndefined();
  });
});

/** The global timers, which vitest fakes, looked up at each call. */
const FAKE_TIMERS = {
  set: (fn: () => void, ms: number) => setTimeout(fn, ms),
  clear: (timer: unknown) => clearTimeout(timer as NodeJS.Timeout),
};

describe('RequestBudget priorities (fake clock)', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 0 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  /** A budget on the fake clock that records when (fake ms) and in which order waiters got tokens. */
  function recordingBudget(perSecond: number) {
    // The fake clock and the fake timers together.
    const budget = new RequestBudget(perSecond, () => Date.now(), FAKE_TIMERS);
    const served: Array<{ name: string; at: number }> = [];
    const ask = (name: string, priority: BudgetPriority = 'normal'): Promise<void> =>
      budget.acquire(undefined, priority).then(() => {
        served.push({ name, at: Date.now() });
      });
    return { budget, served, ask };
  }

  /** Time for one token to refill at `perSecond`, ms. */
  const refillMs = (perSecond: number) => 1000 / (perSecond * (1 + REFILL_HEADROOM));

  it('sends a ping that comes due during a lifecycle run on time: the polls keep clear of it', async () => {
    const { budget, served, ask } = recordingBudget(1);
    budget.reserve(1500); // the scheduler: the next ping is due at 1.5 s
    // A lifecycle run takes its token and queues three more requests (polls).
    void ask('create');
    void ask('poll-1');
    void ask('poll-2');
    void ask('poll-3');
    await vi.advanceTimersByTimeAsync(1500);
    // poll-1's token was back at 0.99 s, but taking it then would have left none for the ping.
    expect(served.map((s) => s.name)).toEqual(['create']);
    void ask('ping', 'first');
    await vi.advanceTimersByTimeAsync(0);
    expect(served.map((s) => s.name)).toEqual(['create', 'ping']);
    expect(served[1]!.at).toBe(1500);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(served.map((s) => s.name)).toEqual(['create', 'ping', 'poll-1', 'poll-2', 'poll-3']);
    // The lifecycle pays for the ping: its next token comes one refill after the ping's, and its
    // requests stay paced 1/(1.01 N) s apart: never two together.
    expect(served[2]!.at).toBe(1500 + Math.ceil(refillMs(1)));
    for (let i = 1; i < served.length; i += 1) {
      expect(served[i]!.at - served[i - 1]!.at).toBeGreaterThanOrEqual(Math.floor(refillMs(1)));
    }
  });

  it('lets a reservation lapse when no ping comes, so the polls go on', async () => {
    const { budget, served, ask } = recordingBudget(1);
    void ask('create');
    await vi.advanceTimersByTimeAsync(0);
    budget.reserve(500); // a ping is due at 0.5 s, but it is skipped and never asks
    void ask('poll-1');
    await vi.advanceTimersByTimeAsync(500 + RESERVATION_GRACE_MS - 1);
    expect(served.map((s) => s.name)).toEqual(['create']);
    await vi.advanceTimersByTimeAsync(1);
    expect(served.map((s) => s.name)).toEqual(['create', 'poll-1']);
    expect(served[1]!.at).toBe(500 + RESERVATION_GRACE_MS);
  });

  it('serves a waiting ping before lifecycle requests that queued earlier', async () => {
    const { served, ask } = recordingBudget(1);
    void ask('ping-0', 'first');
    void ask('ping-1', 'first'); // the bucket is empty: it waits for the refill
    void ask('poll-1');
    void ask('poll-2');
    await vi.advanceTimersByTimeAsync(300);
    void ask('ping-2', 'first');
    await vi.advanceTimersByTimeAsync(10_000);
    expect(served.map((s) => s.name)).toEqual(['ping-0', 'ping-1', 'ping-2', 'poll-1', 'poll-2']);
    // The waiting ping got the first whole token, 1/(1.01 N) s after the bucket ran dry.
    expect(served[1]!.at).toBe(Math.ceil(refillMs(1)));
  });

  it('estimates the wait of each priority behind those served before it', async () => {
    const { budget, ask } = recordingBudget(1);
    void ask('create');
    await vi.advanceTimersByTimeAsync(0);
    expect(budget.waitEstimateMs('first')).toBeCloseTo(refillMs(1), 6);
    expect(budget.waitEstimateMs('normal')).toBeCloseTo(refillMs(1), 6);
    void ask('poll-1');
    expect(budget.waitEstimateMs('first')).toBeCloseTo(refillMs(1), 6);
    expect(budget.waitEstimateMs('normal')).toBeCloseTo(2 * refillMs(1), 6);
    // A ping due at 1.2 s goes before them: one more token to wait for.
    budget.reserve(1200);
    expect(budget.waitEstimateMs('normal')).toBeCloseTo(3 * refillMs(1), 6);
    expect(budget.waitEstimateMs('first')).toBeCloseTo(refillMs(1), 6);
    // One due at 10 s is after the next poll's token: no change.
    budget.reserve(10_000);
    expect(budget.waitEstimateMs('normal')).toBeCloseTo(3 * refillMs(1), 6);
  });

  it('lets through at most 1 + 1.01·N·T requests in T seconds, whatever the mix', async () => {
    const { budget, served, ask } = recordingBudget(2);
    for (let t = 0; t < 10_000; t += 1250) {
      budget.reserve(t);
      setTimeout(() => void ask(`ping-${t}`, 'first'), t);
    }
    for (let i = 0; i < 40; i += 1) void ask(`poll-${i}`);
    await vi.advanceTimersByTimeAsync(10_000);
    const times = served.map((s) => s.at);
    for (const from of times) {
      for (const windowMs of [1, 500, 1000, 5000]) {
        const inWindow = times.filter((t) => t >= from && t < from + windowMs).length;
        expect(inWindow).toBeLessThanOrEqual(1 + (1 + REFILL_HEADROOM) * 2 * (windowMs / 1000));
      }
    }
    // Every ping went out within a millisecond of being due, though polls wanted every token.
    const pings = served.filter((s) => s.name.startsWith('ping'));
    expect(pings).toHaveLength(8);
    for (const ping of pings) {
      expect(ping.at - Number(ping.name.slice('ping-'.length))).toBeLessThanOrEqual(1);
    }
  });

  it('drops an aborted waiter from its queue and serves the next one', async () => {
    const { budget, served, ask } = recordingBudget(1);
    void ask('ping-0', 'first');
    void ask('ping-1', 'first');
    const controller = new AbortController();
    const aborted = budget.acquire(controller.signal, 'first');
    void ask('ping-2', 'first');
    controller.abort();
    await expect(aborted).rejects.toThrow();
    await vi.advanceTimersByTimeAsync(3_000);
    expect(served.map((s) => s.name)).toEqual(['ping-0', 'ping-1', 'ping-2']);
  });
});
