/**
 * When the monitor sends confirmation pings: the daemon's own follow-up state machine
 * (`src/scheduler/follow-up.ts`) driven on a number clock the way the scheduler drives it
 * (`src/scheduler/scheduler.ts`): a scheduled ping that is slower than the critical threshold or
 * fails with a server error, a timeout or a network error starts a sequence (or restarts its
 * window); a tick every `interval` after the start runs a confirmation ping unless the scheduled
 * ping or the previous confirmation ping is still running, or the next scheduled ping is due
 * within the ping deadline (then it is skipped, never queued); `successes` good confirmation pings
 * in a row, or the window, end it.
 *
 * The rule-test generator and the page simulation both use this, so the rules are tested on the
 * confirmation pings the daemon's policy makes. Times are in seconds.
 */
import { FollowUpSequence } from '../../src/scheduler/follow-up.js';

import type { ConfirmEvent, PingOutcome, ScheduledPing } from '../../src/checks/shared/scenario.js';

export type { ConfirmEvent, PingOutcome, ScheduledPing };

export interface ConfirmPolicy {
  interval: number;
  window: number;
  successes: number;
  /**
   * A tick is skipped when the next scheduled ping starts within this many seconds (the ping's
   * deadline: its 10 s timeout plus 1 s, docs/configuration.md "Traffic cost").
   */
  deadline: number;
}

export const DEFAULT_CONFIRM_POLICY: ConfirmPolicy = {
  interval: 10,
  window: 180,
  successes: 3,
  deadline: 11,
};

const bad = (o: PingOutcome) => o.slow || o.failed;

/**
 * The confirmation pings and sequence events that `scheduled` pings (in start order, one at a
 * time) cause. `answer(t)` is what a confirmation ping started at second `t` gets from the API.
 */
export function confirmEvents<T extends PingOutcome>(
  scheduled: ReadonlyArray<ScheduledPing>,
  answer: (t: number) => T,
  policy: ConfirmPolicy = DEFAULT_CONFIRM_POLICY,
): Array<ConfirmEvent<T>> {
  const sequence = new FollowUpSequence({
    intervalMs: policy.interval * 1000,
    windowMs: policy.window * 1000,
    successes: policy.successes,
  });
  const out: Array<ConfirmEvent<T>> = [];
  let nextTick = Infinity;
  let running: { end: number; outcome: T } | null = null;
  let i = 0; // the next scheduled ping to finish

  for (;;) {
    const ping = scheduled[i];
    const scheduledEnd = ping ? ping.start + ping.seconds : Infinity;
    const next = Math.min(scheduledEnd, nextTick, running?.end ?? Infinity);
    if (next === Infinity) break;
    if (running && running.end === next) {
      // A confirmation ping finished: its verdict may end the sequence.
      if (sequence.result(!bad(running.outcome)) === 'recovered') {
        out.push({ kind: 'ended', at: next, end: 'recovered' });
        nextTick = Infinity;
      }
      running = null;
    } else if (next === scheduledEnd && ping) {
      i++;
      if (sequence.scheduled(next * 1000, bad(ping)) === 'started') {
        out.push({ kind: 'started', at: next });
        nextTick = next + policy.interval;
      }
    } else {
      const t = nextTick;
      const verdict = sequence.tick(t * 1000);
      if (verdict === 'window_elapsed') out.push({ kind: 'ended', at: t, end: 'window_elapsed' });
      if (verdict !== 'run') {
        nextTick = Infinity;
        continue;
      }
      nextTick = t + policy.interval;
      const current = scheduled[i];
      const scheduledRunning = current !== undefined && current.start <= t;
      // Scheduled pings run one at a time: the next to start is the unfinished one, or the one after.
      const nextStart = (scheduledRunning ? scheduled[i + 1] : current)?.start ?? Infinity;
      if (running || scheduledRunning || nextStart - t <= policy.deadline) continue;
      const outcome = answer(t);
      out.push({ kind: 'run', start: t, outcome });
      running = { end: t + outcome.seconds, outcome };
    }
  }
  return out;
}
