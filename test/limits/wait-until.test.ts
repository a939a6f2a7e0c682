/**
 * `waitUntil`: resolves when its clock reaches the instant, never before, on a clock the test
 * moves (no wall-clock time involved).
 */
import { describe, expect, it } from 'vitest';
import { SLEEP_SLICE_MS, TIMER_SLACK_MS, waitUntil } from '../../src/limits/timers.js';

/** A clock from 100 ms that moves a quarter of a millisecond per reading, and its readings. */
function steppingClock(): { readings: number[]; clock: () => number } {
  let t = 100;
  const readings: number[] = [];
  const clock = () => {
    readings.push(t);
    t += 0.25;
    return readings.at(-1)!;
  };
  return { readings, clock };
}

describe('waitUntil', () => {
  it('resolves at the first reading of its clock at or past the instant', async () => {
    // Within the timer slack, so the wait is event-loop turns only.
    const { readings, clock } = steppingClock();
    // The monotonic clock stands still: only the clock waited on ends the wait.
    await waitUntil(100 + TIMER_SLACK_MS / 2, { now: clock, monotonic: () => 0 });
    expect(readings.at(-1)).toBeGreaterThanOrEqual(100 + TIMER_SLACK_MS / 2);
    expect(readings.at(-2)).toBeLessThan(100 + TIMER_SLACK_MS / 2);
  });

  it('ends a millisecond after the instant on the monotonic clock when its clock stands still', async () => {
    // A wall clock stepped back (or standing still) must not hold the wait; the monotonic clock
    // moves a millisecond per reading.
    let mono = 0;
    const seen: number[] = [];
    await waitUntil(1, {
      now: () => 0,
      monotonic: () => {
        seen.push(mono);
        return mono++;
      },
    });
    // Instant 1 ms ahead, so the wait ends once the monotonic clock reads 2 (1 ms after it).
    expect(seen).toEqual([0, 1, 2]);
  });

  it('resolves at once for an instant that has passed', async () => {
    let readings = 0;
    await waitUntil(5, {
      now: () => {
        readings += 1;
        return 10;
      },
    });
    expect(readings).toBe(2);
  });

  it('sleeps through the last stretch, no event-loop turn, when no answer is being read', async () => {
    let turned = false;
    setImmediate(() => (turned = true));
    const { readings, clock } = steppingClock();
    const started = performance.now();
    // The monotonic clock stands still here too: on a busy machine the real one can pass the
    // wait's 1 ms bound between two readings and end it early.
    await waitUntil(100 + TIMER_SLACK_MS / 2, {
      now: clock,
      monotonic: () => 0,
      reading: () => false,
    });
    expect(readings.at(-1)).toBeGreaterThanOrEqual(100 + TIMER_SLACK_MS / 2);
    expect(readings.at(-2)).toBeLessThan(100 + TIMER_SLACK_MS / 2);
    // Resolved before the immediate queued ahead of it: the wait never yielded to the loop.
    expect(turned).toBe(false);
    // It slept: at least a slice per reading before the instant.
    expect(performance.now() - started).toBeGreaterThanOrEqual(
      (readings.length - 2) * SLEEP_SLICE_MS,
    );
  });

  it('turns the event loop instead while an answer is being read', async () => {
    let turned = false;
    setImmediate(() => (turned = true));
    let t = 100;
    await waitUntil(101, { now: () => (t += 0.25), monotonic: () => 0, reading: () => true });
    expect(turned).toBe(true);
  });
});
