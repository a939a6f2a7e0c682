/**
 * The follow-up sequence of one check in one environment (e.g. confirmation pings), as a small
 * state machine with no timers and no I/O: the scheduler feeds it times and verdicts and acts on
 * what it answers, so its rules are tested on a plain number clock.
 *
 * - A scheduled run whose result starts a sequence starts one (`started`), or, during one,
 *   restarts its window and its count of good runs (`restarted`).
 * - Each tick while active is a follow-up run (`run`), until the window has passed since the last
 *   start (`window_elapsed`).
 * - `policy.successes` good follow-up runs in a row end it (`recovered`); a bad one starts the
 *   count again.
 */
import type { FollowUpEnd, FollowUpPolicy } from '../kernel/check.js';

export type ScheduledVerdict = 'started' | 'restarted' | null;
export type TickVerdict = 'run' | 'window_elapsed' | 'idle';

export class FollowUpSequence {
  private active = false;
  /** When the last starting scheduled run finished (the window counts from there). */
  private startedAt = 0;
  private goodInRow = 0;

  constructor(readonly policy: FollowUpPolicy) {}

  get isActive(): boolean {
    return this.active;
  }

  /** A scheduled run finished at `now`; `starts` is what the check says of its result. */
  scheduled(now: number, starts: boolean): ScheduledVerdict {
    if (!starts) return null;
    this.startedAt = now;
    // A new bad scheduled result is evidence against the good follow-ups counted so far.
    this.goodInRow = 0;
    if (this.active) return 'restarted';
    this.active = true;
    return 'started';
  }

  /** A follow-up tick at `now`: run one, or end the sequence when its window has passed. */
  tick(now: number): TickVerdict {
    if (!this.active) return 'idle';
    if (now - this.startedAt >= this.policy.windowMs) {
      this.active = false;
      return 'window_elapsed';
    }
    return 'run';
  }

  /** A follow-up run's verdict; `recovered` when it completes the good runs in a row. */
  result(good: boolean): Extract<FollowUpEnd, 'recovered'> | null {
    if (!this.active) return null;
    this.goodInRow = good ? this.goodInRow + 1 : 0;
    if (this.goodInRow < this.policy.successes) return null;
    this.active = false;
    return 'recovered';
  }

  /** The monitor stops: an active sequence ends as `stopped`. */
  stop(): Extract<FollowUpEnd, 'stopped'> | null {
    if (!this.active) return null;
    this.active = false;
    return 'stopped';
  }
}

/**
 * The next time (Unix ms, on or after `nowMs`) a task of `intervalMs` with start offset
 * `offsetMs` fires, as `cronWithOffset` schedules it: whole seconds of the offset by cron, the
 * rest waited on each tick. Intervals are whole seconds dividing a minute, whole minutes dividing
 * an hour, or whole hours dividing a day, so the fire times are `k × interval + offset` from the
 * Unix epoch (hour-level intervals in UTC).
 */
export function nextFireAt(nowMs: number, intervalMs: number, offsetMs: number): number {
  const k = Math.ceil((nowMs - offsetMs) / intervalMs);
  return k * intervalMs + offsetMs;
}
