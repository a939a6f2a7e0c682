import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnyCheck, CheckResult } from '../../src/checks/check.js';
import { lifecycleCheck } from '../../src/checks/lifecycle.js';
import { pingCheck } from '../../src/checks/ping.js';
import type { SkipReason } from '../../src/vocabulary.js';
import { Scheduler } from '../../src/scheduler/scheduler.js';
import {
  captureLogger,
  startTestSimulator,
  testEnvironment,
  testRuntime,
  type TestSimulator,
} from '../support/harness.js';

let sim: TestSimulator;
beforeAll(async () => {
  sim = await startTestSimulator();
});
afterAll(() => sim.close());

/** A ping that also takes `ms` of its own, to force overlapping schedules. */
function slowPing(ms: number): AnyCheck {
  return {
    ...pingCheck,
    async run(ctx) {
      await ctx.sleep(ms);
      return pingCheck.run(ctx);
    },
  };
}

const noLifecycle: AnyCheck = {
  ...lifecycleCheck,
  run: () => Promise.reject(new Error('not scheduled in these tests')),
};

async function schedule(
  check: AnyCheck,
  seconds: number,
  setup?: (s: { gateClose: (ms: number) => void }) => void,
) {
  const env = testEnvironment(sim.url, {
    ping: { intervalMs: 1_000, timeoutMs: 2_500 },
    lifecycle: { enabled: false },
  });
  const { runtime } = await testRuntime(env);
  setup?.({ gateClose: (ms) => runtime.gate.closeFor(ms) });
  const results: CheckResult[] = [];
  const skips: Array<{ check: string; reason: SkipReason }> = [];
  const scheduler = new Scheduler({
    environments: [runtime],
    checks: [check, noLifecycle],
    onResult: (r) => results.push(r),
    onSkip: (_env, c, reason) => skips.push({ check: c, reason }),
    log: captureLogger().log,
    random: () => 0,
  });
  scheduler.start();
  await delay(seconds * 1000);
  await scheduler.stop(5_000);
  await runtime.close();
  return { results, skips, scheduler };
}

describe('Scheduler', () => {
  it('runs a 1 s check about once a second at the second boundary', async () => {
    const { results, scheduler } = await schedule(pingCheck, 3.5);
    expect(scheduler.schedule).toEqual([
      { environment: 'production', check: 'ping', cron: '* * * * * *', offsetMs: 0 },
    ]);
    expect(results.length).toBeGreaterThanOrEqual(2);
    expect(results.length).toBeLessThanOrEqual(4);
    expect(results.every((r) => r.outcome === 'pass')).toBe(true);
  });

  it('never overlaps runs of the same check, and counts the skipped ones as overlap', async () => {
    const { results, skips } = await schedule(slowPing(1_600), 4.5);
    expect(skips.filter((s) => s.reason === 'overlap').length).toBeGreaterThanOrEqual(1);
    // Runs never overlap: each starts after the previous one finished.
    const spans = results.map((r) => [r.startedAt, r.startedAt + r.durationMs] as const);
    for (let i = 1; i < spans.length; i += 1) {
      expect(spans[i]![0]).toBeGreaterThanOrEqual(spans[i - 1]![1] - 1);
    }
  });

  it('skips runs while the API asked to back off, counted as rate_limit_backoff', async () => {
    const before = sim.requests.length;
    const { results, skips } = await schedule(pingCheck, 2.5, ({ gateClose }) => gateClose(60_000));
    expect(results).toEqual([]);
    expect(skips.length).toBeGreaterThanOrEqual(2);
    expect(skips.every((s) => s.reason === 'rate_limit_backoff')).toBe(true);
    expect(sim.requests.length).toBe(before);
  });

  it('stops gracefully: in-flight runs finish, nothing starts afterwards', async () => {
    const env = testEnvironment(sim.url, { lifecycle: { enabled: false } });
    const { runtime } = await testRuntime(env);
    const results: CheckResult[] = [];
    const scheduler = new Scheduler({
      environments: [runtime],
      checks: [slowPing(500), noLifecycle],
      onResult: (r) => results.push(r),
      onSkip: () => {},
      log: captureLogger().log,
      random: () => 0,
    });
    scheduler.start();
    await new Promise<void>((resolve) => {
      const timer = setInterval(() => {
        if (scheduler.running > 0) {
          clearInterval(timer);
          resolve();
        }
      }, 10);
    });
    await scheduler.stop(5_000);
    expect(results).toHaveLength(1);
    expect(results[0]?.outcome).toBe('pass');
    const count = sim.requests.length;
    await delay(1_500);
    expect(sim.requests.length).toBe(count);
    await runtime.close();
  });
});
