/**
 * What bounds a run (docs/architecture.md, "No environment goes silent"): a budget token that
 * cannot come before the deadline ends the run as `budget`, cleanups that overrun their deadline
 * do not hold the run, and the session tokens a run holds go to the reaper when it ends or is
 * abandoned. Fake clocks and event order; no sleeps.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ApiResponse } from '../src/api/client.js';
import type { AnyCheck, CheckContext, CheckOutcome, SessionTracker } from '../src/kernel/check.js';
import { pingCheck } from '../src/checks/ping/index.js';
import { RequestBudget } from '../src/limits/request-budget.js';
import type { RunOptions } from '../src/runner.js';
import { startRun } from './support/run-check.js';

afterEach(() => {
  vi.useRealTimers();
});

function check(run: (ctx: CheckContext) => Promise<CheckOutcome<null>>): AnyCheck {
  return { ...pingCheck, budgetPriority: 'normal', run };
}

/** A session tracker whose creates answer token `t1` at once; what it was told, in order. */
function trackerLog() {
  const told: string[] = [];
  const sessions: SessionTracker = {
    create: () => Promise.resolve({ response: {} as ApiResponse, tokens: ['t1'], durable: true }),
    opened: () => Promise.resolve(),
    closed: (token) => {
      told.push(`closed ${token}`);
      return Promise.resolve();
    },
    release: (token) => void told.push(`release ${token}`),
  };
  return { told, sessions };
}

function run(c: AnyCheck, overrides: Partial<RunOptions> = {}) {
  return startRun('http://127.0.0.1:9', c, { sessions: trackerLog().sessions, ...overrides });
}

/** A budget of 1 request a second on vitest's fake clock, from 0. */
function oneTokenASecond() {
  vi.useFakeTimers({ now: 0, toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  const clock = () => Date.now();
  const budget = new RequestBudget(1, clock, {
    set: (fn, ms) => setTimeout(fn, ms),
    clear: (timer) => clearTimeout(timer as NodeJS.Timeout),
  });
  return { budget, clock };
}

describe('a budget token that cannot come in time', () => {
  it('ends the run as `budget` at once, not as an error at the deadline', async () => {
    // 1 request a second: the second token is 990 ms away, the run has 200 ms.
    const { budget, clock } = oneTokenASecond();
    let requests = 0;
    const twice = check(async (ctx) => {
      await ctx.acquireBudget();
      requests += 1;
      await ctx.acquireBudget();
      requests += 1;
      return { outcome: 'pass', reason: null, facts: null };
    });
    const { result } = run(twice, { budget, timeoutMs: 200, now: clock, wallNow: clock });
    await vi.advanceTimersByTimeAsync(0);
    expect(await result).toMatchObject({ outcome: 'fail', reason: 'budget' });
    expect(requests).toBe(1);
    // Nothing waited: the run ended before its deadline.
    expect(Date.now()).toBe(0);
  });

  it('is `budget` too when the deadline comes while the request waits for its token', async () => {
    const { budget, clock } = oneTokenASecond();
    // The estimate says 990 ms, within the 1500 ms deadline; a ping made due once the wait began
    // takes the token first, so the wait outlasts the run.
    const waiting = check(async (ctx) => {
      await ctx.acquireBudget();
      setTimeout(() => {
        budget.reserve(880);
        setTimeout(() => void budget.acquire(undefined, 'first'), 880);
      }, 10);
      await ctx.acquireBudget();
      return { outcome: 'pass', reason: null, facts: null };
    });
    const { result } = run(waiting, { budget, timeoutMs: 1_500, now: clock, wallNow: clock });
    await vi.advanceTimersByTimeAsync(1_499);
    expect(Date.now()).toBe(1_499);
    await vi.advanceTimersByTimeAsync(1);
    expect(await result).toMatchObject({ outcome: 'fail', reason: 'budget' });
  });
});

describe('the sessions a run holds', () => {
  it('go to the reaper when cleanups overrun their deadline, and the run ends at it', async () => {
    vi.useFakeTimers({ now: 0, toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const { told, sessions } = trackerLog();
    const stuck = check(async (ctx) => {
      await ctx.sessions.create({}, { timeoutMs: 1_000 });
      ctx.cleanup(() => new Promise<void>(() => {}));
      return { outcome: 'pass', reason: null, facts: null };
    });
    const { result, lines } = run(stuck, { sessions, cleanupTimeoutMs: 300 });
    await vi.advanceTimersByTimeAsync(299);
    expect(told).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(await result).toMatchObject({ outcome: 'pass' });
    expect(told).toEqual(['release t1']);
    expect(lines.map((l) => l.msg)).toContain(
      'check cleanups overran their deadline; left to the reaper',
    );
  });

  it('are not released twice: a token the run closed is its own no longer', async () => {
    const { told, sessions } = trackerLog();
    const closes = check(async (ctx) => {
      await ctx.sessions.create({}, { timeoutMs: 1_000 });
      await ctx.sessions.closed('t1');
      return { outcome: 'pass', reason: null, facts: null };
    });
    await run(closes, { sessions }).result;
    expect(told).toEqual(['closed t1']);
  });

  it('go to the reaper at once when the run is abandoned, and the run is aborted', async () => {
    const { told, sessions } = trackerLog();
    let aborted: (() => void) | null = null;
    const abandonedRun = new Promise<void>((resolve) => (aborted = resolve));
    const hangs = check(async (ctx) => {
      await ctx.sessions.create({}, { timeoutMs: 1_000 });
      ctx.signal.addEventListener('abort', () => aborted?.(), { once: true });
      await new Promise(() => {});
      return { outcome: 'pass', reason: null, facts: null };
    });
    const abandon = new AbortController();
    void run(hangs, { sessions, abandon: abandon.signal });
    await vi.waitFor(() => expect(aborted).not.toBeNull());
    await new Promise((resolve) => setImmediate(resolve));
    expect(told).toEqual([]);
    abandon.abort(new Error('abandoned'));
    expect(told).toEqual(['release t1']);
    await abandonedRun;
  });
});
