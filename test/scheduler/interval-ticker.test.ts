/**
 * Any interval (docs/configuration.md, "Intervals"): the ticker and the scheduler on a fake clock,
 * for intervals no cron step divides (45 s, 90 s, 7 min, 1.5 s): runs at exactly
 * `k × interval + offset`, hours on end, no drift, and a late wake still arms its period.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { parseConfigText } from '../../src/config/index.js';
import { IntervalTicker, periodStartAtOrAfter } from '../../src/scheduler/interval-ticker.js';
import { Scheduler } from '../../src/scheduler/scheduler.js';
import {
  captureLogger,
  startTestSimulator,
  testEnvironment,
  testRuntime,
  type TestSimulator,
} from '../support/harness.js';
import { instantPing, noLifecycle } from '../support/scheduled-checks.js';
import { CHECK_LIST } from '../../src/checks/index.js';
import { sectionOf } from '../../src/config/section.js';
import { lifecycleCheck } from '../../src/checks/lifecycle/index.js';
import { pingCheck } from '../../src/checks/ping/index.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('IntervalTicker', () => {
  it.each([1_000, 1_500, 45_000, 90_000, 7 * 60_000])(
    'wakes a second before every period of %i ms, on the period, for hours',
    async (intervalMs) => {
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
      vi.setSystemTime(1_700_000_000_123);
      const wakes: number[] = [];
      const periods: number[] = [];
      const ticker = new IntervalTicker({
        intervalMs,
        aheadMs: Math.min(1_000, intervalMs),
        onPeriod: (period) => {
          wakes.push(Date.now());
          periods.push(period);
        },
      });
      ticker.start();
      const span = Math.max(3 * 3_600_000, 50 * intervalMs);
      await vi.advanceTimersByTimeAsync(span);
      ticker.stop();
      const ahead = Math.min(1_000, intervalMs);
      expect(periods.length).toBeGreaterThanOrEqual(Math.floor(span / intervalMs) - 1);
      expect(periods.every((p) => p % intervalMs === 0)).toBe(true);
      expect(periods.every((p, i) => i === 0 || p - periods[i - 1]! === intervalMs)).toBe(true);
      expect(wakes.every((w, i) => w === periods[i]! - ahead)).toBe(true);
    },
  );

  it('arms its period when a wake comes late, and the period the clock is in when a whole one late', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    vi.setSystemTime(0);
    const periods: number[] = [];
    const ticker = new IntervalTicker({
      intervalMs: 45_000,
      aheadMs: 1_000,
      onPeriod: (period) => periods.push(period),
    });
    ticker.start();
    expect(ticker.firstPeriod()).toBe(45_000);
    // The wall clock jumps 6 s ahead (a thread held up that long, as the timers see it) before
    // the wake at 44 s: the wake comes at 50 s, late, and still arms the period from 45 s (its
    // runs then start at once, late).
    await vi.advanceTimersByTimeAsync(30_000);
    vi.setSystemTime(36_000);
    await vi.advanceTimersByTimeAsync(14_000);
    expect(Date.now()).toBe(50_000);
    expect(periods).toEqual([45_000]);
    // Then two whole periods lost before the wake at 89 s: it comes at 181 s and arms the period
    // the clock is in (from 180 s); the runs of 90 s and 135 s are gone.
    vi.setSystemTime(142_000);
    await vi.advanceTimersByTimeAsync(39_000);
    expect(Date.now()).toBe(181_000);
    expect(periods).toEqual([45_000, 180_000]);
    ticker.stop();
  });

  it('finds the first period whose wake is still ahead', () => {
    expect(periodStartAtOrAfter(90_001, 45_000)).toBe(135_000);
    expect(periodStartAtOrAfter(90_000, 45_000)).toBe(90_000);
  });
});

describe('the scheduler at any interval', () => {
  let sim: TestSimulator;
  beforeAll(async () => {
    sim = await startTestSimulator();
  });
  afterAll(() => sim.close());

  it.each([
    { intervalMs: 45_000, spanMs: 6 * 45_000 },
    { intervalMs: 7 * 60_000, spanMs: 4 * 7 * 60_000 },
  ])('runs a $intervalMs ms ping at exactly that spacing', async ({ intervalMs, spanMs }) => {
    vi.useFakeTimers({
      toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'],
    });
    vi.setSystemTime(new Date('2026-03-29T00:30:00.000Z'));
    const env = testEnvironment(sim.url, {
      ping: { intervalMs, timeoutMs: 2_000 },
      lifecycle: { enabled: false },
    });
    const { runtime } = await testRuntime(env);
    const starts: number[] = [];
    const scheduler = new Scheduler({
      environments: [runtime],
      checks: [instantPing, noLifecycle],
      onResult: (r) => starts.push(r.startedAt),
      onSkip: () => {},
      log: captureLogger().log,
      random: () => 0.37,
    });
    scheduler.start();
    for (let elapsed = 0; elapsed < spanMs; elapsed += 1_000) {
      await vi.advanceTimersByTimeAsync(1_000);
    }
    vi.useRealTimers();
    await scheduler.stop(1_000);
    await runtime.close();
    const offset = Math.floor(0.37 * intervalMs);
    expect(starts.length).toBeGreaterThanOrEqual(Math.floor(spanMs / intervalMs) - 1);
    expect(starts.every((t) => (t - offset) % intervalMs === 0)).toBe(true);
    expect(starts.slice(1).map((t, i) => t - starts[i]!)).toEqual(
      starts.slice(1).map(() => intervalMs),
    );
  });
});

describe('the configuration', () => {
  // Ping and lifecycle are always registered: the test stays whole whichever checks a build has.
  it('accepts 45 s, 90 s, 1.5 s and 7 min intervals', () => {
    const loaded = parseConfigText(
      [
        'environments:',
        '  - name: production',
        '    base_url: https://api.example.invalid',
        '    ping: { interval: 45s, timeout: 5s }',
        '    lifecycle: { interval: 7m, addresses: [{ street1: "1 A St", zip: "80202" }] }',
        '  - name: staging',
        '    base_url: https://api.example.invalid',
        '    ping: { interval: 90s }',
        '    lifecycle: { enabled: false }',
        '  - name: sandbox',
        '    base_url: https://api.example.invalid',
        '    ping: { interval: 1500ms, timeout: 1s }',
        '    lifecycle: { enabled: false }',
      ].join('\n'),
      {
        checks: CHECK_LIST,
        env: {
          ISA_PRODUCTION_API_KEY: 'k-0123456789',
          ISA_STAGING_API_KEY: 'k-9876543210',
          ISA_SANDBOX_API_KEY: 'k-5555555555',
        },
      },
    );
    if (!loaded.ok) expect.fail(JSON.stringify(loaded.problems));
    const [production, staging, sandbox] = loaded.config.environments;
    expect([
      sectionOf(production!, pingCheck).intervalMs,
      sectionOf(production!, lifecycleCheck).intervalMs,
      sectionOf(staging!, pingCheck).intervalMs,
      sectionOf(sandbox!, pingCheck).intervalMs,
    ]).toEqual([45_000, 420_000, 90_000, 1_500]);
  });
});
