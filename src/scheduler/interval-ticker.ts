/**
 * One interval's clock: it wakes `aheadMs` before each period of the interval and hands the
 * period's start to `onPeriod`, which arms the period's runs. Any interval of at least a second
 * (45 s, 90 s, 7 min), not only those a cron step divides: periods are whole multiples of the
 * interval since the Unix epoch, as the synthetic-monitoring agent's offset ticker counts them.
 *
 * No drift: every wake is worked out again from the wall clock and the period it is for, never
 * added to the last one, so a timer's lateness is not carried on. A wake that comes late (a
 * thread held up) still arms its period: runs already due start at once, late, instead of being
 * dropped; one a whole period or more late arms the period it is in, and the ones it slept through
 * are gone (their runs would all be late at once).
 */

/** The start of the first period of `intervalMs` at or after `atMs` (wall clock, ms). */
export function periodStartAtOrAfter(atMs: number, intervalMs: number): number {
  return Math.ceil(atMs / intervalMs) * intervalMs;
}

export interface IntervalTickerOptions {
  intervalMs: number;
  /** How long before each period it wakes, ms (at most one interval). */
  aheadMs: number;
  /** Called at each wake with the start (wall clock, ms) of the period it arms. */
  onPeriod: (periodStart: number) => void;
  /** Wall clock, ms; default `Date.now` (tests on a fake clock fake it). */
  now?: () => number;
}

export class IntervalTicker {
  private timer: NodeJS.Timeout | null = null;
  /** The period the next wake arms; set by `start`. */
  private nextPeriod = 0;
  private readonly now: () => number;

  constructor(private readonly opts: IntervalTickerOptions) {
    this.now = opts.now ?? Date.now;
  }

  /** The first period this ticker arms: the first whose wake is still ahead. */
  firstPeriod(): number {
    const { intervalMs, aheadMs } = this.opts;
    const start = periodStartAtOrAfter(this.now() + aheadMs, intervalMs);
    // A wake due this very millisecond is taken as gone: its period is armed at start instead.
    return start - aheadMs > this.now() ? start : start + intervalMs;
  }

  /** The start of the period the next wake arms (once started). */
  get nextPeriodStart(): number {
    return this.nextPeriod;
  }

  /** Starts waking for `firstPeriod` (default: `firstPeriod()` now) and every period after it. */
  start(firstPeriod = this.firstPeriod()): void {
    this.nextPeriod = firstPeriod;
    this.arm();
  }

  stop(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  private arm(): void {
    const wakeAt = this.nextPeriod - this.opts.aheadMs;
    this.timer = setTimeout(() => this.wake(), Math.max(0, wakeAt - this.now()));
  }

  private wake(): void {
    const { intervalMs, aheadMs } = this.opts;
    const now = this.now();
    // A whole period late (or a wall clock stepped ahead): arm the period the clock is in now.
    while (now - (this.nextPeriod - aheadMs) >= intervalMs) this.nextPeriod += intervalMs;
    // A wall clock stepped back: wait for the wake again rather than arming a period twice.
    if (this.nextPeriod - aheadMs - now > intervalMs) {
      this.nextPeriod = this.firstPeriod();
      this.arm();
      return;
    }
    const period = this.nextPeriod;
    this.nextPeriod += intervalMs;
    this.arm();
    this.opts.onPeriod(period);
  }
}
