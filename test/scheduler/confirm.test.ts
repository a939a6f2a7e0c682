/**
 * Confirmation pings through the real scheduler, the real ping check and a real simulator on
 * loopback, on a fake clock (the schedule's tickers and the follow-up timers): pings every 10 s at
 * second 0, 10, 20, …; confirmation every 1 s. Requests are counted at the simulator.
 */
import { setTimeout as realDelay } from 'node:timers/promises';
import { describe, expect, it, vi } from 'vitest';
import type { CheckResult, FollowUpEvent } from '../../src/kernel/check.js';
import { pingCheck } from '../../src/checks/ping/index.js';
import type { PingConfirmConfig } from '../../src/checks/ping/index.js';
import { Scheduler } from '../../src/scheduler/scheduler.js';
import type { FaultRule } from '../../src/simulator/faults.js';
import { captureLogger, testEnvironment, testRuntime } from '../support/harness.js';
import { useTestSimulator } from '../support/simulator-hooks.js';

const sim = useTestSimulator();

const START = '2026-01-01T12:00:00.500Z';
const T0 = Date.parse('2026-01-01T12:00:00.000Z');

interface Run {
  results: CheckResult[];
  events: FollowUpEvent[];
  skips: string[];
  /** Ping requests the simulator received. */
  pings: number;
}

/**
 * Runs ping (every 10 s, timeout 3 s: deadline 4 s) with `confirm` for `seconds` of fake time,
 * one second at a time, letting each run settle.
 */
async function run(
  seconds: number,
  confirm: PingConfirmConfig,
  opts: {
    faults?: FaultRule[];
    budget?: number;
    before?: (r: { gateClose: (ms: number) => void }) => void;
  } = {},
): Promise<Run> {
  for (const rule of opts.faults ?? []) sim.simulator.faults.add(rule);
  vi.useFakeTimers({
    toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'],
  });
  vi.setSystemTime(new Date(START));
  const env = testEnvironment(sim.url, {
    ping: { intervalMs: 10_000, timeoutMs: 3_000, confirm },
    lifecycle: { enabled: false },
    ...(opts.budget === undefined ? {} : { requestBudgetPerSecond: opts.budget }),
  });
  const { runtime } = await testRuntime(env);
  opts.before?.({ gateClose: (ms) => runtime.gate.closeFor(ms) });
  const out: Run = { results: [], events: [], skips: [], pings: 0 };
  const before = sim.requests.filter((r) => r.path === '/ping').length;
  const scheduler = new Scheduler({
    environments: [runtime],
    checks: [pingCheck],
    onResult: (r) => out.results.push(r),
    onSkip: (_e, _c, reason) => out.skips.push(reason),
    onFollowUp: (_e, _c, event) => out.events.push(event),
    log: captureLogger().log,
    random: () => 0,
    now: () => Date.now(),
  });
  scheduler.start();
  for (let s = 0; s < seconds; s++) {
    await vi.advanceTimersByTimeAsync(1_000);
    // On the real clock (node:timers/promises is not faked), so the fake one stands still while
    // the requests of this second are answered.
    for (let waited = 0; scheduler.running > 0 && waited < 5_000; waited += 5) await realDelay(5);
    expect(scheduler.running).toBe(0);
  }
  vi.useRealTimers();
  await scheduler.stop(1_000);
  await runtime.close();
  out.pings = sim.requests.filter((r) => r.path === '/ping').length - before;
  return out;
}

const followUps = (r: Run) => r.results.filter((x) => x.followUp === true);
const scheduled = (r: Run) => r.results.filter((x) => x.followUp !== true);
/**
 * The whole second after 12:00:00 in which each follow-up run started. The fake clock stands at
 * x.5 s while requests are answered, so a sequence starts (and ticks) at x.5 s.
 */
const followUpSeconds = (r: Run) => followUps(r).map((x) => Math.floor((x.startedAt - T0) / 1000));

const CONFIRM = { intervalMs: 1_000, windowMs: 5_000, successes: 2 };
const ONE_500: FaultRule = { endpoint: 'ping', fault: { kind: 'status', status: 500 }, count: 1 };
const ALL_500: FaultRule = { endpoint: 'ping', fault: { kind: 'status', status: 500 } };

describe('confirmation pings', () => {
  it('make no request at all in a healthy period', async () => {
    const r = await run(35, CONFIRM);
    expect(scheduled(r)).toHaveLength(3);
    expect(followUps(r)).toEqual([]);
    expect(r.events).toEqual([]);
    // Counted at the simulator: the three scheduled pings, nothing else.
    expect(r.pings).toBe(3);
  });

  it('a failed scheduled ping starts them; they stop after `successes` good ones', async () => {
    const r = await run(19, CONFIRM, { faults: [ONE_500] });
    expect(scheduled(r).map((x) => x.reason)).toEqual(['server_error']);
    expect(followUpSeconds(r)).toEqual([11, 12]);
    expect(followUps(r).map((x) => x.outcome)).toEqual(['pass', 'pass']);
    expect(r.events).toEqual([{ type: 'started' }, { type: 'ended', end: 'recovered' }]);
    expect(r.pings).toBe(3);
  });

  it('the window ends them while the API keeps failing', async () => {
    const r = await run(19, CONFIRM, { faults: [ALL_500] });
    // Started at 12:00:10.5; ticks at 11.5 … 14.5 run, the tick at 15.5 finds the window passed.
    expect(followUpSeconds(r)).toEqual([11, 12, 13, 14]);
    expect(followUps(r).every((x) => x.reason === 'server_error')).toBe(true);
    expect(r.events).toEqual([{ type: 'started' }, { type: 'ended', end: 'window_elapsed' }]);
    expect(r.pings).toBe(5);
  });

  it('never overlap a scheduled ping: no tick within its deadline (4 s) before one', async () => {
    const r = await run(39, { ...CONFIRM, windowMs: 60_000 }, { faults: [ALL_500] });
    // Scheduled at 10, 20, 30; every scheduled one restarts the window.
    expect(scheduled(r).map((x) => Math.round((x.startedAt - T0) / 1000))).toEqual([10, 20, 30]);
    // Ticks at x1.5 … x5.5 run; x6.5 … x9.5 are within 4 s of the next scheduled ping.
    expect(followUpSeconds(r)).toEqual([
      11, 12, 13, 14, 15, 21, 22, 23, 24, 25, 31, 32, 33, 34, 35,
    ]);
    // No follow-up run was in flight when a scheduled one started, nor the reverse.
    for (const f of followUps(r)) {
      for (const s of scheduled(r)) {
        const [first, second] = f.startedAt < s.startedAt ? [f, s] : [s, f];
        expect(first.startedAt + first.durationMs).toBeLessThanOrEqual(second.startedAt);
      }
    }
    expect(r.skips).toEqual([]);
    expect(r.events).toEqual([{ type: 'started' }, { type: 'ended', end: 'stopped' }]);
    expect(r.pings).toBe(3 + 15);
  });

  it('honour Retry-After: a tick inside it is skipped, never queued', async () => {
    const r = await run(19, CONFIRM, {
      faults: [
        {
          endpoint: 'ping',
          fault: { kind: 'status', status: 503, retryAfterSeconds: 120 },
          count: 1,
        },
      ],
    });
    expect(scheduled(r).map((x) => x.reason)).toEqual(['server_error']);
    expect(followUps(r)).toEqual([]);
    expect(r.events).toEqual([{ type: 'started' }, { type: 'ended', end: 'window_elapsed' }]);
    expect(r.pings).toBe(1);
  });

  it('honour the request budget: without a token at once, a tick is skipped', async () => {
    // One token per 100 s (real time): the scheduled ping takes it, no confirmation ping gets one.
    const r = await run(19, CONFIRM, { faults: [ALL_500], budget: 0.01 });
    expect(scheduled(r)).toHaveLength(1);
    expect(followUps(r)).toEqual([]);
    expect(r.pings).toBe(1);
  });

  it('are not started by a 401 or a 429', async () => {
    const r = await run(19, CONFIRM, {
      faults: [{ endpoint: 'ping', fault: { kind: 'status', status: 401 }, count: 1 }],
    });
    expect(scheduled(r).map((x) => x.reason)).toEqual(['unauthorized']);
    expect(r.events).toEqual([]);
    expect(r.pings).toBe(1);
  });
});

describe('the ping check decides what starts and what is good', () => {
  const facts = (result: string, latencyClass: string | null) =>
    ({ result, latencyClass }) as never;
  const followUp = pingCheck.followUp!;
  it.each([
    ['ok', 'critical', true],
    ['ok', 'warning', false],
    ['server_error', null, true],
    ['timeout', 'critical', true],
    ['network_error', null, true],
    ['unauthorized', 'expected', false],
    ['rate_limited', 'expected', false],
    ['unexpected_status', 'expected', false],
    ['invalid_body', 'expected', false],
  ])('%s at %s latency starts a sequence: %s', (result, latencyClass, starts) => {
    expect(followUp.starts(facts(result, latencyClass))).toBe(starts);
  });

  it('a good confirmation ping is ok and not critical', () => {
    expect(followUp.good(facts('ok', 'warning'))).toBe(true);
    expect(followUp.good(facts('ok', 'critical'))).toBe(false);
    expect(followUp.good(facts('server_error', null))).toBe(false);
    expect(followUp.good(null)).toBe(false);
  });
});
