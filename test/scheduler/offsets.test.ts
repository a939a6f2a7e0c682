/**
 * Start offsets below a second: cron fires on whole seconds, and the scheduler waits the rest of a
 * task's offset on every tick, so many environments spread across the second instead of starting
 * together. Fake timers drive node-cron and the scheduler; the check records when it started.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { AnyCheck } from '../../src/checks/check.js';
import { lifecycleCheck } from '../../src/checks/lifecycle.js';
import { pingCheck } from '../../src/checks/ping.js';
import { Scheduler } from '../../src/scheduler/scheduler.js';
import { captureLogger, testEnvironment, testRuntime } from '../support/harness.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('Scheduler start offsets', () => {
  it('keeps whole seconds in cron and waits the sub-second rest of the offset on each tick', async () => {
    const env = testEnvironment('http://127.0.0.1:9', {
      ping: { intervalMs: 10_000, timeoutMs: 2_500 },
      lifecycle: { enabled: false },
    });
    const { runtime } = await testRuntime(env);
    vi.useFakeTimers({ now: new Date('2026-11-22T12:00:00.000Z') });
    const startedAt: number[] = [];
    const ping: AnyCheck = {
      ...pingCheck,
      run: () => {
        startedAt.push(Date.now());
        return Promise.resolve({ outcome: 'pass', reason: null, facts: null });
      },
    };
    const idle: AnyCheck = { ...lifecycleCheck, run: () => Promise.reject(new Error('unused')) };
    const scheduler = new Scheduler({
      environments: [runtime],
      checks: [ping, idle],
      onResult: () => {},
      onSkip: () => {},
      log: captureLogger().log,
      // 0.3456 of a 10 s interval: 3456 ms, so second 3 of every 10, plus 456 ms.
      random: () => 0.3456,
    });
    scheduler.start();
    expect(scheduler.schedule).toEqual([
      { environment: 'production', check: 'ping', cron: '3-59/10 * * * * *', offsetMs: 3456 },
    ]);
    await vi.advanceTimersByTimeAsync(25_000);
    const base = Date.parse('2026-11-22T12:00:00.000Z');
    expect(startedAt.map((t) => t - base)).toEqual([3456, 13456, 23456]);
    vi.useRealTimers();
    await scheduler.stop(1_000);
    await runtime.close();
  });
});
