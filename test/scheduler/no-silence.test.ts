/**
 * No environment goes silent (docs/architecture.md): a run's in-flight mark lasts as long as the run
 * and never longer than its bound, by event order and on a fake clock, never by sleeping.
 *
 * The defect these pin: after a Retry-After, a ping's mark was cleared only after the sweep of
 * leftover sessions that followed the run. That sweep waited for a budget token the budget kept
 * for the next ping, the next ping was skipped as an `overlap` because the mark was still set, and
 * so on for minutes. The first test fails on a scheduler that sweeps inside the mark.
 */
import { getEventListeners } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import type { AnyCheck, CheckResult } from '../../src/kernel/check.js';
import { pingCheck } from '../../src/checks/ping/index.js';
import type { EnvironmentRuntime } from '../../src/environment.js';
import { RUN_SETTLE_MS, Scheduler } from '../../src/scheduler/scheduler.js';
import type { SkipReason } from '../../src/kernel/vocabulary.js';
import { captureLogger, testEnvironment, testRuntime } from '../support/harness.js';
import { useTestSimulator } from '../support/simulator-hooks.js';
import { instantPing, noLifecycle } from '../support/scheduled-checks.js';

const sim = useTestSimulator();

/**
 * Makes `runtime`'s sweeps wait as the real one did when the defect showed (until its signal
 * aborts: a budget token kept for the very ping it held up); the signals they were given.
 */
function waitingSweeps(runtime: EnvironmentRuntime): AbortSignal[] {
  const signals: AbortSignal[] = [];
  runtime.reaper.sweep = (opts = {}) => {
    // The shutdown sweep (forced) stands for the next process: it has nothing to wait for here.
    if (opts.force === true) return Promise.resolve(0);
    signals.push(opts.signal!);
    return new Promise<number>((resolve) =>
      opts.signal?.addEventListener('abort', () => resolve(0), { once: true }),
    );
  };
  return signals;
}

async function setUp(check: AnyCheck) {
  const env = testEnvironment(sim.url, {
    ping: { intervalMs: 1_000, timeoutMs: 800, requestTimeoutMs: 800 },
    lifecycle: { enabled: false },
  });
  const { runtime, ledger, lines } = await testRuntime(env);
  const results: CheckResult[] = [];
  const skips: SkipReason[] = [];
  const abandoned: string[] = [];
  const { log, lines: schedulerLines } = captureLogger();
  const scheduler = new Scheduler({
    environments: [runtime],
    checks: [check, noLifecycle],
    onResult: (r) => results.push(r),
    onSkip: (_env, _check, reason) => skips.push(reason),
    onAbandon: (environment, c) => abandoned.push(`${environment}/${c}`),
    log,
  });
  return { runtime, ledger, lines, scheduler, results, skips, abandoned, schedulerLines };
}

describe('a run and the sweep after it', () => {
  it("never holds the run's in-flight mark: the next ping runs while a sweep still waits", async () => {
    const { runtime, scheduler, results, skips } = await setUp(instantPing);
    // Event order only: no clock is involved.
    const sweepSignals = waitingSweeps(runtime);
    scheduler.fire(runtime, instantPing);
    await vi.waitFor(() => expect(results).toHaveLength(1));
    await vi.waitFor(() => expect(scheduler.running).toBe(0));
    scheduler.fire(runtime, instantPing);
    await vi.waitFor(() => expect(results).toHaveLength(2));
    expect(skips).toEqual([]);
    // One sweep at a time per environment, and it has a deadline of its own.
    expect(sweepSignals).toHaveLength(1);
    expect(sweepSignals[0]?.aborted).toBe(false);
    await scheduler.stop(1_000);
    expect(sweepSignals[0]?.aborted).toBe(true);
    await runtime.close();
  });

  it('bounds a sweep by its own deadline, so the next one can start', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const { runtime, scheduler, results } = await setUp(instantPing);
    const sweepSignals = waitingSweeps(runtime);
    scheduler.fire(runtime, instantPing);
    await vi.waitFor(() => expect(results).toHaveLength(1));
    await vi.advanceTimersByTimeAsync(runtime.sweepTimeoutMs());
    expect(sweepSignals[0]?.aborted).toBe(true);
    scheduler.fire(runtime, instantPing);
    await vi.waitFor(() => expect(sweepSignals).toHaveLength(2));
    vi.useRealTimers();
    await scheduler.stop(1_000);
    await runtime.close();
  });
});

describe('a run that overstays its bound', () => {
  /** A ping whose cleanup never ends and ignores its signal: a stuck run. */
  function stuckPing() {
    let cleanupsStarted = 0;
    const check: AnyCheck = {
      ...pingCheck,
      run(ctx) {
        ctx.cleanup(() => {
          cleanupsStarted += 1;
          return new Promise<void>(() => {});
        });
        return Promise.resolve({ outcome: 'pass', reason: null, facts: null });
      },
    };
    return { check, cleanupsStarted: () => cleanupsStarted };
  }

  it('is abandoned at its deadline plus its cleanups, logged and counted; the next runs go', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const stuck = stuckPing();
    const { runtime, scheduler, results, skips, abandoned, schedulerLines } = await setUp(
      stuck.check,
    );
    scheduler.fire(runtime, stuck.check);
    await vi.waitFor(() => expect(stuck.cleanupsStarted()).toBe(1));
    // The runner gives up on its cleanups at their deadline and reports the run.
    await vi.advanceTimersByTimeAsync(runtime.cleanupTimeoutFor(stuck.check));
    await vi.waitFor(() => expect(results).toHaveLength(1));
    expect(scheduler.running).toBe(0);

    // A run stuck before its cleanups: its mark is cleared at the bound, not later.
    const hung: AnyCheck = { ...pingCheck, run: () => new Promise(() => {}) };
    scheduler.fire(runtime, hung);
    const bound = runtime.runBoundFor(hung) + RUN_SETTLE_MS;
    await vi.advanceTimersByTimeAsync(1_000);
    scheduler.fire(runtime, hung);
    expect(skips).toEqual(['overlap']);
    await vi.advanceTimersByTimeAsync(bound - 1_001);
    expect(abandoned).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(abandoned).toEqual(['production/ping']);
    expect(schedulerLines.map((l) => l.msg)).toContain(
      'check run abandoned: still in flight past its deadline and its cleanups; its sessions are left to the reaper',
    );
    await vi.waitFor(() => expect(scheduler.running).toBe(0));
    scheduler.fire(runtime, stuck.check);
    await vi.waitFor(() => expect(stuck.cleanupsStarted()).toBe(2));
    expect(skips).toEqual(['overlap']);
    const stopped = scheduler.stop(10);
    await vi.advanceTimersByTimeAsync(bound);
    await stopped;
    vi.useRealTimers();
    await runtime.close();
  });
});

describe('listeners on long-lived signals', () => {
  it('are all removed once the runs and sweeps that waited on them end', async () => {
    const { runtime, scheduler, results } = await setUp(pingCheck);
    const outer = (scheduler as unknown as { abort: AbortController }).abort.signal;
    for (let i = 0; i < 12; i++) {
      scheduler.fire(runtime, pingCheck);
      await vi.waitFor(() => expect(results).toHaveLength(i + 1));
      await vi.waitFor(() => expect(scheduler.running).toBe(0));
    }
    await vi.waitFor(() => expect(getEventListeners(outer, 'abort')).toHaveLength(0));
    await scheduler.stop(1_000);
    await runtime.close();
  });
});
