/**
 * The scheduler's side of a configuration reload (docs/configuration.md, "Reload"), on vitest's
 * fake clock: an environment replaced by a changed one keeps its schedule's offset, so the reload
 * fires no run sooner than due and skips none; a changed interval takes its own grid; a removed
 * environment fires no more.
 */
import { describe, expect, it, vi } from 'vitest';
import type { CheckResult } from '../../src/kernel/check.js';
import type { EnvironmentRuntime } from '../../src/environment.js';
import { Scheduler } from '../../src/scheduler/scheduler.js';
import { captureLogger, testEnvironment, testRuntime } from '../support/harness.js';
import { useTestSimulator } from '../support/simulator-hooks.js';
import { instantPing, noLifecycle } from '../support/scheduled-checks.js';

const sim = useTestSimulator();

async function runtimeWith(intervalMs: number, name = 'production'): Promise<EnvironmentRuntime> {
  const env = testEnvironment(sim.url, {
    ping: { intervalMs, timeoutMs: 900 },
    lifecycle: { enabled: false },
  });
  return (await testRuntime({ ...env, name })).runtime;
}

/** Advances the fake clock a second at a time, letting each run settle. */
async function advance(scheduler: Scheduler, ms: number): Promise<void> {
  for (let elapsed = 0; elapsed < ms; elapsed += 1_000) {
    await vi.advanceTimersByTimeAsync(Math.min(1_000, ms - elapsed));
    await vi.waitFor(() => expect(scheduler.running).toBe(0), { timeout: 5_000 });
  }
}

describe('Scheduler reload', () => {
  it('replaces an environment without moving its schedule, and removes one', async () => {
    vi.useFakeTimers({
      toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'],
    });
    vi.setSystemTime(new Date('2026-01-01T12:00:00.300Z'));
    const results: CheckResult[] = [];
    const first = await runtimeWith(1_000);
    const other = await runtimeWith(1_000, 'sandbox');
    // Offsets: 0.25 of the interval for the two schedules made at start, 0.75 for later ones.
    let drawn = 0;
    const scheduler = new Scheduler({
      environments: [first, other],
      checks: [instantPing, noLifecycle],
      onResult: (r) => results.push(r),
      onSkip: () => {},
      log: captureLogger().log,
      random: () => (drawn++ < 2 ? 0.25 : 0.75),
    });
    scheduler.start();
    await advance(scheduler, 2_200);
    // 12:00:02.500: production changes (same interval), the sandbox goes.
    const keep = new Map(scheduler.schedule.map((t) => [`${t.environment}/${t.check}`, t]));
    const changed = await runtimeWith(1_000);
    await scheduler.remove('production');
    await scheduler.remove('sandbox');
    scheduler.add([changed], keep);
    await advance(scheduler, 2_000);
    // Then production's interval becomes 2 s: a new schedule, at a new random offset (1.5 s).
    const slower = await runtimeWith(2_000);
    const keepAgain = new Map(scheduler.schedule.map((t) => [`${t.environment}/${t.check}`, t]));
    await scheduler.remove('production');
    scheduler.add([slower], keepAgain);
    await advance(scheduler, 4_000);
    vi.useRealTimers();
    await scheduler.stop(1_000);
    const starts = (environment: string) =>
      results
        .filter((r) => r.environment === environment)
        .map((r) => new Date(r.startedAt).toISOString().slice(11, 23));
    expect(starts('production')).toEqual([
      '12:00:01.250',
      '12:00:02.250',
      // The reload at 02.500: the next run is still at 03.250, not sooner, none skipped.
      '12:00:03.250',
      '12:00:04.250',
      // The 2 s interval from 04.500: its grid at 1.5 s past every even second.
      '12:00:05.500',
      '12:00:07.500',
    ]);
    expect(starts('sandbox')).toEqual(['12:00:01.250', '12:00:02.250']);
    expect(scheduler.schedule).toEqual([
      { environment: 'production', check: 'ping', intervalMs: 2_000, offsetMs: 1_500 },
    ]);
    for (const runtime of [first, other, changed, slower]) await runtime.close();
  });
});
