/**
 * The runner, through its one entry point: the run deadline against a request's own timeout,
 * cleanups (newest first, after failures and aborts, under their own deadline), and how a failed
 * run is classified (`timeout` when the deadline or a shutdown ended it, `error` otherwise).
 * Deadlines are tens of milliseconds and every wait ends on an event, never on a fixed sleep.
 */
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ApiResponse } from '../src/api/client.js';
import { CALLER_ABORT_CODE, DEADLINE_CODE } from '../src/api/transport-errors.js';
import type { AnyCheck, CheckContext, CheckOutcome } from '../src/kernel/check.js';
import { pingCheck } from '../src/checks/ping/index.js';
import { RequestBudget } from '../src/limits/request-budget.js';
import type { RunOptions } from '../src/runner.js';
import { startRun } from './support/run-check.js';
import { ping } from '../src/checks/ping/request.js';

/** A loopback server that accepts connections and never answers. */
let silent: Server;
let silentUrl: string;
const sockets = new Set<Socket>();
beforeAll(async () => {
  silent = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  silentUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise<void>((resolve) => silent.close(() => resolve()));
});

/** A check with the ping check's declarations and a run of the test's own. */
function check(run: (ctx: CheckContext) => Promise<CheckOutcome<null>>): AnyCheck {
  return { ...pingCheck, run };
}

async function run(c: AnyCheck, overrides: Partial<RunOptions> = {}) {
  const { result, lines } = startRun(silentUrl, c, overrides);
  return { result: await result, lines };
}

/** A check that pings the silent server with its own request timeout. */
function pingWithTimeout(
  requestTimeoutMs: number,
  seen: { response?: ApiResponse; aborted?: boolean },
) {
  return check(async (ctx) => {
    const response = await ping(ctx.client, {
      timeoutMs: requestTimeoutMs,
      signal: ctx.signal,
      correlationId: ctx.correlationId,
    });
    ctx.step('ping', response);
    seen.response = response;
    seen.aborted = ctx.signal.aborted;
    return { outcome: 'fail', reason: 'timeout', facts: null };
  });
}

describe('the run deadline and a request timeout', () => {
  it('lets a shorter request timeout end the request while the run goes on', async () => {
    const seen: { response?: ApiResponse; aborted?: boolean } = {};
    const { result } = await run(pingWithTimeout(50, seen), { timeoutMs: 5_000 });
    expect(seen.response?.transportError?.code).toBe(DEADLINE_CODE);
    // Not aborted: the run's 5 s deadline had not fired when the check returned.
    expect(seen.aborted).toBe(false);
    expect(result.steps).toHaveLength(1);
  });

  it('cuts a longer request at the run deadline, through the signal the check passed on', async () => {
    const seen: { response?: ApiResponse; aborted?: boolean } = {};
    const { result } = await run(pingWithTimeout(5_000, seen), { timeoutMs: 50 });
    expect(seen.response?.transportError?.code).toBe(CALLER_ABORT_CODE);
    expect(seen.aborted).toBe(true);
    // Cut by the abort (CALLER_ABORT_CODE above), not by its own 5 s timeout.
    expect(result.durationMs).toBeGreaterThanOrEqual(40);
  });
});

describe('how a failed run is classified', () => {
  const hang = check(async (ctx) => {
    await ctx.sleep(60_000);
    return { outcome: 'pass', reason: null, facts: null };
  });

  it('is a timeout when the deadline ended it', async () => {
    const { result, lines } = await run(hang, { timeoutMs: 30 });
    expect(result).toMatchObject({ outcome: 'fail', reason: 'timeout' });
    expect(lines.find((l) => l.msg === 'check run ended with an error')?.fields).toMatchObject({
      aborted: true,
    });
  });

  it('is a timeout when a shutdown aborted it', async () => {
    const shutdown = new AbortController();
    const started = check(async (ctx) => {
      queueMicrotask(() => shutdown.abort());
      await ctx.sleep(60_000);
      return { outcome: 'pass', reason: null, facts: null };
    });
    const { result } = await run(started, { signal: shutdown.signal });
    // The 60 s sleep was cut: the run ended within the test's own timeout.
    expect(result).toMatchObject({ outcome: 'fail', reason: 'timeout' });
  });

  it('is an error when the check throws before its deadline', async () => {
    const broken = check(() => Promise.reject(new Error('unexpected shape')));
    const { result, lines } = await run(broken, { timeoutMs: 5_000 });
    expect(result).toMatchObject({ outcome: 'fail', reason: 'error' });
    expect(lines.find((l) => l.msg === 'check run ended with an error')?.fields).toMatchObject({
      aborted: false,
    });
  });

  it('keeps the outcome the check returned', async () => {
    const ok = check(() => Promise.resolve({ outcome: 'pass', reason: null, facts: null }));
    const { result } = await run(ok);
    expect(result).toMatchObject({ outcome: 'pass', reason: null, check: 'ping' });
  });
});

describe('cleanups', () => {
  it('run newest first, after the check returned, and a failing one stops none of the others', async () => {
    const order: string[] = [];
    const c = check(async (ctx) => {
      ctx.cleanup(async () => void order.push('first registered'));
      ctx.cleanup(() => Promise.reject(new Error('close failed')));
      ctx.cleanup(async () => void order.push('last registered'));
      order.push('check returned');
      return { outcome: 'pass', reason: null, facts: null };
    });
    const { result, lines } = await run(c);
    expect(order).toEqual(['check returned', 'last registered', 'first registered']);
    expect(result.outcome).toBe('pass');
    expect(lines.filter((l) => l.msg === 'check cleanup failed')).toHaveLength(1);
  });

  it('run after a failure, and never change its reason', async () => {
    const order: string[] = [];
    const c = check(async (ctx) => {
      ctx.cleanup(async () => void order.push('cleanup'));
      throw new Error('boom');
    });
    const { result } = await run(c);
    expect(order).toEqual(['cleanup']);
    expect(result.reason).toBe('error');
  });

  it('run after the deadline aborted the check, with a fresh signal they can wait on', async () => {
    const inCleanup: { abortedAtStart?: boolean; slept?: boolean } = {};
    const c = check(async (ctx) => {
      ctx.cleanup(async () => {
        inCleanup.abortedAtStart = ctx.signal.aborted;
        await ctx.sleep(5);
        inCleanup.slept = true;
      });
      await ctx.sleep(60_000);
      return { outcome: 'pass', reason: null, facts: null };
    });
    const { result } = await run(c, { timeoutMs: 30 });
    expect(result.reason).toBe('timeout');
    expect(inCleanup).toEqual({ abortedAtStart: false, slept: true });
  });

  it('run after a shutdown abort too', async () => {
    const shutdown = new AbortController();
    let cleaned = false;
    const c = check(async (ctx) => {
      ctx.cleanup(async () => void (cleaned = true));
      queueMicrotask(() => shutdown.abort());
      await ctx.sleep(60_000);
      return { outcome: 'pass', reason: null, facts: null };
    });
    await run(c, { signal: shutdown.signal });
    expect(cleaned).toBe(true);
  });

  it('have their own deadline: a hanging cleanup is cut off', async () => {
    let cleanupAborted = false;
    const c = check(async (ctx) => {
      ctx.cleanup(async () => {
        await ctx.sleep(60_000).catch(() => (cleanupAborted = true));
      });
      return { outcome: 'pass', reason: null, facts: null };
    });
    const { result } = await run(c, { cleanupTimeoutMs: 30 });
    expect(cleanupAborted).toBe(true);
    expect(result.outcome).toBe('pass');
  });
});

describe('waits for the request budget', () => {
  it('keeps them out of the run duration and reports them on their own', async () => {
    vi.useFakeTimers({ now: 0, toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    try {
      const clock = () => Date.now();
      // Three requests at 10/s: the first at once, the next two after a refill each; 30 ms of
      // the check's own work in between.
      const paced = check(async (ctx) => {
        for (let i = 0; i < 3; i += 1) {
          await ctx.acquireBudget();
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        return { outcome: 'pass', reason: null, facts: null };
      });
      const running = run(
        { ...paced, budgetPriority: 'normal' },
        {
          budget: new RequestBudget(10, clock, {
            set: (fn, ms) => setTimeout(fn, ms),
            clear: (timer) => clearTimeout(timer as NodeJS.Timeout),
          }),
          now: clock,
        },
      );
      await vi.advanceTimersByTimeAsync(1_000);
      const { result } = await running;
      expect(result.durationMs).toBe(30);
      // Tokens 2 and 3 each come a 1/(10 × 1.01) s refill after the one before, less the 10 ms
      // of work since; timers round each wait up to a whole millisecond.
      const waitedMs = 2 * (1000 / 10.1 - 10);
      expect(result.budgetWaitMs).toBeGreaterThanOrEqual(waitedMs);
      expect(result.budgetWaitMs).toBeLessThanOrEqual(waitedMs + 2);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('a run set up ahead of its instant (startAt)', () => {
  it('sends its first request at the instant and is timed from it', async () => {
    const leadMs = 30;
    const setUpMono = performance.now();
    const startAt = Date.now() + leadMs;
    let admittedAt = 0;
    const { result } = await run(
      check(async (ctx) => {
        await ctx.acquireBudget();
        admittedAt = Date.now();
        return { outcome: 'pass', reason: null, facts: null };
      }),
      { startAt },
    );
    const endMono = performance.now();
    expect(admittedAt).toBeGreaterThanOrEqual(startAt);
    expect(result.startedAt).toBe(startAt);
    // The wait until the instant lasted at least `leadMs` less the millisecond Date.now() may
    // trail by; none of it is in the duration.
    expect(result.durationMs).toBeLessThanOrEqual(endMono - setUpMono - (leadMs - 1));
    // Nor is it a budget wait: the lead, the budget wait and the run lie apart in the time
    // measured around them, however slow the machine was.
    expect(result.durationMs + (result.budgetWaitMs ?? 0)).toBeLessThanOrEqual(
      endMono - setUpMono - (leadMs - 1),
    );
  });

  it('starts at once when it is set up after its instant', async () => {
    const startAt = Date.now() - 50;
    const before = Date.now();
    const { result } = await run(
      check(async (ctx) => {
        await ctx.acquireBudget();
        return { outcome: 'pass', reason: null, facts: null };
      }),
      { startAt },
    );
    expect(result.startedAt).toBeGreaterThanOrEqual(before);
  });
});
