/**
 * The scheduler without waiting on the wall clock: its tickers run on vitest's fake clock,
 * and overlap, back-off and shutdown are driven tick by tick with checks the test releases.
 */
import { describe, expect, it, vi } from 'vitest';
import type { AnyCheck, CheckResult } from '../../src/kernel/check.js';
import { pingCheck } from '../../src/checks/ping/index.js';
import type { SkipReason } from '../../src/kernel/vocabulary.js';
import type { EnvironmentRuntime } from '../../src/environment.js';
import { FIRE_LEAD_MS, Scheduler } from '../../src/scheduler/scheduler.js';
import { captureLogger, testEnvironment, testRuntime } from '../support/harness.js';
import { useTestSimulator } from '../support/simulator-hooks.js';
import { instantPing, noLifecycle } from '../support/scheduled-checks.js';

const sim = useTestSimulator();

/** A ping check whose runs wait until the test releases them; `started` counts the runs. */
function heldPing() {
  const waiting: Array<() => void> = [];
  let started = 0;
  let notify: () => void = () => {};
  const check: AnyCheck = {
    ...pingCheck,
    async run(ctx) {
      started++;
      notify();
      ctx.cleanup(async () => void cleanups.push(started));
      await new Promise<void>((resolve, reject) => {
        waiting.push(resolve);
        ctx.signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
      });
      return pingCheck.run(ctx);
    },
  };
  const cleanups: number[] = [];
  return {
    check,
    cleanups,
    started: () => started,
    /** Resolves once `n` runs have started. */
    untilStarted: (n: number) =>
      new Promise<void>((resolve) => {
        notify = () => started >= n && resolve();
        notify();
      }),
    releaseAll: () => waiting.splice(0).forEach((resolve) => resolve()),
  };
}

async function setUp(
  check: AnyCheck,
  {
    random = (): number => 0,
    intervalMs = 1_000,
    timeoutMs = 2_500,
    prepare,
  }: {
    random?: () => number;
    intervalMs?: number;
    timeoutMs?: number;
    prepare?: () => void;
  } = {},
) {
  const env = testEnvironment(sim.url, {
    ping: { intervalMs, timeoutMs },
    lifecycle: { enabled: false },
  });
  const { runtime } = await testRuntime(env);
  const results: CheckResult[] = [];
  const skips: Array<{ check: string; reason: SkipReason }> = [];
  let resultSeen: () => void = () => {};
  const scheduler = new Scheduler({
    environments: [runtime],
    checks: [check, noLifecycle],
    onResult: (r) => {
      results.push(r);
      resultSeen();
    },
    onSkip: (_env, c, reason) => skips.push({ check: c, reason }),
    log: captureLogger().log,
    random,
    ...(prepare ? { prepare } : {}),
  });
  const nextResult = () => new Promise<void>((resolve) => (resultSeen = resolve));
  return { runtime, scheduler, results, skips, nextResult };
}

const instant = instantPing;

describe('Scheduler', () => {
  /** Runs an instant check on the fake clock from `startIso` for `ms`; its runs' start times. */
  async function onFakeClock(
    startIso: string,
    ms: number,
    options: Parameters<typeof setUp>[1],
    beforeStart: (runtime: EnvironmentRuntime) => void = () => {},
    /** Called before each second is run (e.g. to step the clock). */
    eachSecond: () => void = () => {},
  ) {
    vi.useFakeTimers({
      toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'],
    });
    vi.setSystemTime(new Date(startIso));
    const { runtime, scheduler, results } = await setUp(instant, options);
    beforeStart(runtime);
    scheduler.start();
    // A second at a time, letting each finished run settle: after a run the scheduler sweeps the
    // session ledger, which is file I/O on the real clock, and a run still settling would turn the
    // next tick into an overlap skip.
    for (let elapsed = 0; elapsed < ms; elapsed += 1_000) {
      eachSecond();
      await vi.advanceTimersByTimeAsync(Math.min(1_000, ms - elapsed));
      await vi.waitFor(() => expect(scheduler.running).toBe(0), { timeout: 5_000 });
    }
    vi.useRealTimers();
    await scheduler.stop(1_000);
    await runtime.close();
    return {
      schedule: scheduler.schedule,
      starts: results.map((r) => new Date(r.startedAt).toISOString()),
    };
  }

  it('fires a 1 s check once per second, on the second boundary', async () => {
    const { schedule, starts } = await onFakeClock('2026-01-01T12:00:00.300Z', 3_000, {});
    expect(schedule).toEqual([
      { environment: 'production', check: 'ping', intervalMs: 1_000, offsetMs: 0 },
    ]);
    expect(starts).toEqual([
      '2026-01-01T12:00:01.000Z',
      '2026-01-01T12:00:02.000Z',
      '2026-01-01T12:00:03.000Z',
    ]);
  });

  /** A hook for `onFakeClock` that notes the instant of every budget reservation in `into`. */
  function recordReservations(into: number[]) {
    return (runtime: EnvironmentRuntime) => {
      const reserve = runtime.budget.reserve.bind(runtime.budget);
      runtime.budget.reserve = (inMs: number) => {
        into.push(Date.now() + inMs);
        reserve(inMs);
      };
    };
  }

  /** Runs a 15 s ping from `startIso` for `ms` at offset `fraction`: its starts and reservations. */
  async function reservingRuns(startIso: string, ms: number, fraction: number) {
    const reserved: number[] = [];
    const { starts } = await onFakeClock(
      startIso,
      ms,
      { random: () => fraction, intervalMs: 15_000 },
      recordReservations(reserved),
    );
    return { starts, reserved: reserved.map((t) => new Date(t).toISOString()) };
  }

  it('reserves the request budget for every coming ping, from start and on each tick', async () => {
    // 0.5123 of a 15 s interval: fires at 7.684 s past every 15 s.
    const { reserved } = await reservingRuns('2026-01-01T12:00:00.300Z', 31_000, 0.5123);
    // The lifecycle (disabled here) reserves nothing: it is not a `first` check. The interval's
    // task ticks at second 14 of every 15, arming the period after it.
    expect(reserved).toEqual([
      '2026-01-01T12:00:07.684Z', // at start: the first ping
      '2026-01-01T12:00:22.684Z', // at start, arming 07.684 (before the first tick's period)
      '2026-01-01T12:00:37.684Z', // at the tick at 14, arming 22.684
      '2026-01-01T12:00:52.684Z', // at the tick at 29, arming 37.684
    ]);
  });

  // Each run is reserved once: the first at start, every later one when the run before it is armed.
  it.each([
    {
      name: 'reserves the budget for the run after one due before the first tick',
      // Started at 07.000 for a run at 07.684: before the period the first tick (second 14) arms,
      // so the run gets its timer at start (reserving 22.684), and the tick at 14 is for 22.684.
      startIso: '2026-01-01T12:00:07.000Z',
      ms: 31_000,
      fraction: 0.5123,
      starts: ['12:00:07.684', '12:00:22.684', '12:00:37.684'],
      reserved: ['12:00:07.684', '12:00:22.684', '12:00:37.684', '12:00:52.684'],
    },
    {
      name: 'arms at start every run due before the first tick, two for one late in its period',
      // 14.901 s into a 15 s interval, started at 14.500: the tick at second 14 has gone by, so
      // the first is at 29 and arms the period from 30; 14.901 and 29.901 are armed at start.
      startIso: '2026-01-01T12:00:14.500Z',
      ms: 32_000,
      fraction: 0.99341,
      starts: ['12:00:14.901', '12:00:29.901', '12:00:44.901'],
      reserved: ['12:00:14.901', '12:00:29.901', '12:00:44.901', '12:00:59.901', '12:01:14.901'],
    },
  ])('$name', async ({ startIso, ms, fraction, starts, reserved }) => {
    const runs = await reservingRuns(startIso, ms, fraction);
    const iso = (times: string[]) => times.map((t) => `2026-01-01T${t}Z`);
    expect(runs.starts).toEqual(iso(starts));
    expect(runs.reserved).toEqual(iso(reserved));
  });

  it("arms a period whose tick comes late, instead of dropping the period's runs", async () => {
    // The tick at 14 arms the period from 15 (the run at 22.684). Shortly before it the clock
    // jumps 2 s ahead with no timer run meanwhile, as for a thread held up that long: the tick
    // then comes at 16, 2 s late: a whole second after its period began.
    let jumped = false;
    const { starts } = await onFakeClock(
      '2026-01-01T12:00:00.300Z',
      31_000,
      { random: () => 0.5123, intervalMs: 15_000 },
      () => {},
      () => {
        if (jumped || Date.now() % 60_000 < 12_500) return;
        jumped = true;
        vi.setSystemTime(Date.now() + 2_000);
      },
    );
    expect(jumped).toBe(true);
    expect(starts).toEqual(['2026-01-01T12:00:07.684Z', '2026-01-01T12:00:22.684Z']);
  });

  it('fires at its fixed start offset inside the interval, to the millisecond', async () => {
    // 0.5123 of a 15 s interval: 7684 ms. The interval's task ticks at second 14 of every 15, a
    // second before each period, and arms a timer for 7.684 s into it, so many environments
    // spread across the second.
    const { schedule, starts } = await onFakeClock('2026-01-01T12:00:00.000Z', 40_000, {
      random: () => 0.5123,
      intervalMs: 15_000,
    });
    expect(schedule).toEqual([
      { environment: 'production', check: 'ping', intervalMs: 15_000, offsetMs: 7684 },
    ]);
    expect(starts).toEqual([
      '2026-01-01T12:00:07.684Z',
      '2026-01-01T12:00:22.684Z',
      '2026-01-01T12:00:37.684Z',
    ]);
  });

  it('wakes each run FIRE_LEAD_MS ahead to prepare, and starts it at its instant', async () => {
    const prepared: string[] = [];
    const { starts } = await onFakeClock('2026-01-01T12:00:00.000Z', 40_000, {
      random: () => 0.5123,
      intervalMs: 15_000,
      prepare: () => prepared.push(new Date(Date.now() + FIRE_LEAD_MS).toISOString()),
    });
    expect(prepared).toEqual(starts);
    expect(starts).toEqual([
      '2026-01-01T12:00:07.684Z',
      '2026-01-01T12:00:22.684Z',
      '2026-01-01T12:00:37.684Z',
    ]);
  });

  it('fires environments that share an interval, from one task, each at its own offset', async () => {
    vi.useFakeTimers({
      toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'],
    });
    vi.setSystemTime(new Date('2026-01-01T12:00:00.000Z'));
    // Of a 10 s interval: one task, ticking at second 9 of every 10, arms all three.
    const fractions = [0.325, 0.39, 0.71];
    const runtimes = await Promise.all(
      ['a', 'b', 'c'].map(async (name) => {
        const env = testEnvironment(sim.url, {
          name,
          ping: { intervalMs: 10_000, timeoutMs: 2_500 },
          lifecycle: { enabled: false },
        });
        return (await testRuntime(env)).runtime;
      }),
    );
    const starts: string[] = [];
    let next = 0;
    const scheduler = new Scheduler({
      environments: runtimes,
      checks: [instant, noLifecycle],
      onResult: (r) => starts.push(`${r.environment} ${new Date(r.startedAt).toISOString()}`),
      onSkip: () => {},
      log: captureLogger().log,
      random: () => fractions[next++]!,
    });
    scheduler.start();
    expect(scheduler.schedule.map((s) => [s.environment, s.intervalMs, s.offsetMs])).toEqual([
      ['a', 10_000, 3250],
      ['b', 10_000, 3900],
      ['c', 10_000, 7100],
    ]);
    for (let elapsed = 0; elapsed < 20_000; elapsed += 1_000) {
      await vi.advanceTimersByTimeAsync(1_000);
      await vi.waitFor(() => expect(scheduler.running).toBe(0), { timeout: 5_000 });
    }
    vi.useRealTimers();
    await scheduler.stop(1_000);
    await Promise.all(runtimes.map((runtime) => runtime.close()));
    expect(starts.sort()).toEqual([
      'a 2026-01-01T12:00:03.250Z',
      'a 2026-01-01T12:00:13.250Z',
      'b 2026-01-01T12:00:03.900Z',
      'b 2026-01-01T12:00:13.900Z',
      'c 2026-01-01T12:00:07.100Z',
      'c 2026-01-01T12:00:17.100Z',
    ]);
  });

  it('never overlaps runs of the same check, and counts the skipped ticks as overlap', async () => {
    const held = heldPing();
    const { runtime, scheduler, results, skips, nextResult } = await setUp(held.check);
    scheduler.fire(runtime, held.check);
    await held.untilStarted(1);
    scheduler.fire(runtime, held.check);
    scheduler.fire(runtime, held.check);
    expect(held.started()).toBe(1);
    expect(skips).toEqual([
      { check: 'ping', reason: 'overlap' },
      { check: 'ping', reason: 'overlap' },
    ]);
    const first = nextResult();
    held.releaseAll();
    await first;
    // The next tick after the run finished starts a run again.
    await vi.waitFor(() => expect(scheduler.running).toBe(0));
    scheduler.fire(runtime, held.check);
    await held.untilStarted(2);
    const second = nextResult();
    held.releaseAll();
    await second;
    expect(results.map((r) => r.outcome)).toEqual(['pass', 'pass']);
    await scheduler.stop(1_000);
    await runtime.close();
  });

  it('skips ticks while the API asked to back off, counted as rate_limit_backoff', async () => {
    const before = sim.requests.length;
    const { runtime, scheduler, results, skips } = await setUp(pingCheck);
    runtime.gate.closeFor(60_000);
    scheduler.fire(runtime, pingCheck);
    scheduler.fire(runtime, pingCheck);
    expect(skips).toEqual([
      { check: 'ping', reason: 'rate_limit_backoff' },
      { check: 'ping', reason: 'rate_limit_backoff' },
    ]);
    expect(scheduler.running).toBe(0);
    await scheduler.stop(1_000);
    await runtime.close();
    expect(results).toEqual([]);
    expect(sim.requests.length).toBe(before);
  });

  it('stops gracefully: an in-flight run finishes, no tick starts one afterwards', async () => {
    const held = heldPing();
    const { runtime, scheduler, results } = await setUp(held.check);
    scheduler.fire(runtime, held.check);
    await held.untilStarted(1);
    const stopped = scheduler.stop(5_000);
    held.releaseAll();
    await stopped;
    expect(results.map((r) => r.outcome)).toEqual(['pass']);
    scheduler.fire(runtime, held.check);
    expect(held.started()).toBe(1);
    expect(scheduler.running).toBe(0);
    await runtime.close();
  });

  it('aborts a run that outlives the grace period, and its cleanups still run', async () => {
    const held = heldPing();
    // A run deadline of 21 s: the run must end at the 20 ms grace period, long before it.
    const { runtime, scheduler, results } = await setUp(held.check, { timeoutMs: 20_000 });
    scheduler.fire(runtime, held.check);
    await held.untilStarted(1);
    await scheduler.stop(20);
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ outcome: 'fail', reason: 'timeout' });
    expect(results[0]?.durationMs).toBeLessThan(10_000);
    expect(held.cleanups).toEqual([1]);
    await runtime.close();
  });
});
