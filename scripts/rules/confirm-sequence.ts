/**
 * When the monitor sends confirmation pings, modelled after the daemon's rules (docs/checks.md,
 * `ping.confirm`): a scheduled ping that is slower than the critical threshold or fails with a
 * server error, a timeout or a network error starts a sequence, or restarts the window of the
 * running one. The sequence pings every `interval`; it ends after `successes` good confirmation
 * pings in a row (result ok and not critical) or when `window` has passed since the last
 * scheduled ping that started it. A tick that falls while a scheduled ping or the previous
 * confirmation ping is still running is skipped, never queued.
 *
 * The rule-test generator and the noise simulation both use this, so the confirmation pings the
 * rules are tested on are the ones the daemon's policy makes. Times are in seconds.
 */

/** One ping's outcome as the paging rules see it. */
export interface PingOutcome {
  /** Slower than the critical threshold (timeouts included). */
  slow: boolean;
  /** A server error, a timeout or a network error. */
  failed: boolean;
  /** How long it ran. */
  seconds: number;
}

export interface ScheduledPing extends PingOutcome {
  start: number;
}

export interface ConfirmPolicy {
  interval: number;
  window: number;
  successes: number;
}

export const DEFAULT_CONFIRM_POLICY: ConfirmPolicy = { interval: 10, window: 180, successes: 3 };

export type ConfirmEvent<T> =
  | { kind: 'ping'; start: number; outcome: T }
  | { kind: 'started'; at: number }
  | { kind: 'ended'; at: number; end: 'recovered' | 'window_elapsed' };

/**
 * The confirmation pings and sequence events that `scheduled` pings (in start order) cause.
 * `answer(t)` is what a confirmation ping started at second `t` gets from the API.
 */
export function confirmEvents<T extends PingOutcome>(
  scheduled: ReadonlyArray<ScheduledPing>,
  answer: (t: number) => T,
  policy: ConfirmPolicy = DEFAULT_CONFIRM_POLICY,
): Array<ConfirmEvent<T>> {
  const out: Array<ConfirmEvent<T>> = [];
  let active = false;
  let deadline = 0;
  let nextTick = 0;
  let good = 0;
  let busyUntil = 0; // the running confirmation ping's end
  let last = -1; // the last scheduled ping started at or before the tick (ticks only go forward)

  const runningScheduled = (t: number): boolean => {
    while (last + 1 < scheduled.length && (scheduled[last + 1] as ScheduledPing).start <= t) last++;
    const s = scheduled[last];
    return s !== undefined && t < s.start + s.seconds;
  };

  // Ticks due before the next scheduled ping ends; stops at `until`.
  const tickUntil = (until: number) => {
    while (active && nextTick < until) {
      if (nextTick >= deadline) {
        out.push({ kind: 'ended', at: deadline, end: 'window_elapsed' });
        active = false;
        return;
      }
      const t = nextTick;
      nextTick += policy.interval;
      if (t < busyUntil || runningScheduled(t)) continue;
      const outcome = answer(t);
      out.push({ kind: 'ping', start: t, outcome });
      busyUntil = t + outcome.seconds;
      if (!outcome.slow && !outcome.failed) good++;
      else good = 0;
      if (good >= policy.successes) {
        out.push({ kind: 'ended', at: busyUntil, end: 'recovered' });
        active = false;
        return;
      }
    }
  };

  for (const ping of scheduled) {
    const end = ping.start + ping.seconds;
    tickUntil(end);
    if (!ping.slow && !ping.failed) continue;
    deadline = end + policy.window;
    if (!active) {
      active = true;
      good = 0;
      nextTick = end + policy.interval;
      out.push({ kind: 'started', at: end });
    }
  }
  tickUntil(Infinity);
  return out;
}
