/**
 * Maintenance windows (docs/configuration.md, "Maintenance windows"): when each window of an
 * environment starts and ends, and whether a moment is inside one. Pure functions of a time in
 * milliseconds, so the daemon's timer and the tests on a fake clock compute the same thing.
 *
 * A recurring window starts at each minute its cron expression matches on the wall clock of its
 * time zone, and lasts its duration. croner parses the expression and finds the matching minutes
 * (`nextRun` from any moment, `match` of one moment). node-cron, which the daemon's schedules once
 * used, can only list the runs after the present moment, and its `match` costs about 40 µs a
 * minute, so a walk minute by minute over the two-day lookahead took about 110 ms per window.
 * Across a DST change a wall-clock time that does not exist that day (02:30 when clocks spring
 * forward) starts no window, and one that occurs twice (01:30 when they fall back) starts two:
 * croner moves the first to the end of the gap and keeps one of the second, for a schedule of one
 * fixed time of day, as cron does; `startsOf` undoes both so that every schedule keeps this rule.
 * A time zone costs an `Intl.DateTimeFormat` (about 8 MiB of RSS once used); without `timezone`
 * croner reads the process's local time with `Date`'s own getters and creates none.
 */
import { Cron } from 'croner';

const MINUTE_MS = 60_000;

/** One configured window, as `config/` resolves it. */
export type MaintenanceWindow = RecurringWindow | FixedWindow;

export interface RecurringWindow {
  kind: 'recurring';
  /** The cron expression, five fields (minute hour day-of-month month day-of-week). */
  schedule: string;
  durationMs: number;
  /** IANA time zone of the expression; null: the process's local time. */
  timezone: string | null;
  reason: string;
}

export interface FixedWindow {
  kind: 'fixed';
  startMs: number;
  endMs: number;
  reason: string;
}

/** One occurrence of a window: `[startMs, endMs)`, with the window's index and reason. */
export interface Occurrence {
  startMs: number;
  endMs: number;
  reason: string;
  window: number;
}

/**
 * The croner job of `schedule`, without a function, so it never sets a timer. Five fields;
 * day-of-month and day-of-week must both match (`domAndDow`), as the configuration documents.
 * Throws croner's `TypeError` or `RangeError` for an expression it does not read.
 */
export function cronJob(schedule: string, timezone: string | null = null): Cron {
  return new Cron(schedule, {
    mode: '5-part',
    domAndDow: true,
    ...(timezone === null ? {} : { timezone }),
  });
}

/** Each window's job, made once: the windows are configuration and never change. */
const jobs = new WeakMap<RecurringWindow, Cron>();

function jobOf(window: RecurringWindow): Cron {
  let job = jobs.get(window);
  if (job === undefined) {
    job = cronJob(window.schedule, window.timezone);
    jobs.set(window, job);
  }
  return job;
}

/** The DST changes of the time zones in use move clocks by 30 minutes, an hour or two. */
const REPEAT_OFFSETS_MS = [30 * MINUTE_MS, 60 * MINUTE_MS, 120 * MINUTE_MS] as const;

/**
 * The minutes in `[fromMs, toMs)` at which `window`'s schedule matches, in order, read on the
 * wall clock of its time zone; at most `limit` of them.
 */
export function startsOf(
  window: RecurringWindow,
  fromMs: number,
  toMs: number,
  limit = Infinity,
): number[] {
  const job = jobOf(window);
  const firstMs = Math.ceil(fromMs / MINUTE_MS) * MINUTE_MS;
  const found = new Set<number>();
  const add = (t: number) => {
    if (t >= firstMs && t < toMs) found.add(t);
  };
  // Every match up to the last run taken is in `found`, so its first `limit` are the first ones.
  let taken = 0;
  // nextRun is strictly after its argument. The walk starts early enough to see the first run
  // of a wall-clock time that repeats inside the range.
  let run = job.nextRun(new Date(firstMs - REPEAT_OFFSETS_MS[2] - 1000));
  while (run !== null && run.getTime() < toMs && taken < limit) {
    const t = run.getTime();
    // croner runs a fixed time the DST gap skips at the gap's end; no window starts then.
    if (job.match(run) && t >= firstMs) {
      found.add(t);
      taken++;
    }
    // It runs a fixed time the clocks repeat once; the repeat starts a window too.
    for (const offset of REPEAT_OFFSETS_MS) {
      if (job.match(new Date(t + offset))) add(t + offset);
    }
    run = job.nextRun(run);
  }
  return [...found].sort((a, b) => a - b).slice(0, limit);
}

/** Whether `timezone` is a time zone this runtime knows (croner's `timezone` option). */
export function isKnownTimeZone(timezone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
    return true;
  } catch {
    return false;
  }
}

/** The longest a recurring window may last: longer ones are written with `start` and `end`. */
export const MAX_RECURRING_DURATION_MS = 24 * 60 * MINUTE_MS;

/** Occurrences of `windows` that overlap `[fromMs, toMs)`, by start time. */
export function occurrences(
  windows: readonly MaintenanceWindow[],
  fromMs: number,
  toMs: number,
): Occurrence[] {
  const out: Occurrence[] = [];
  windows.forEach((w, window) => {
    if (w.kind === 'fixed') {
      if (w.startMs < toMs && w.endMs > fromMs) {
        out.push({ startMs: w.startMs, endMs: w.endMs, reason: w.reason, window });
      }
      return;
    }
    // A start just after `fromMs - duration` still lasts past `fromMs`.
    for (const startMs of startsOf(w, fromMs - w.durationMs + 1, toMs)) {
      out.push({ startMs, endMs: startMs + w.durationMs, reason: w.reason, window });
    }
  });
  return out.sort((a, b) => a.startMs - b.startMs || a.window - b.window);
}

/** An environment's windows at one moment. */
export interface MaintenanceState {
  /** The window `nowMs` is in, its end that of every window overlapping it in a row; or null. */
  active: { startMs: number; endMs: number; reason: string } | null;
  /** The next window to start after `nowMs` (after `active`), within the horizon; or null. */
  next: { startMs: number; endMs: number; reason: string } | null;
  /** When the state changes next: the active window's end, else the next start; or null. */
  nextEdgeMs: number | null;
}

/** How far ahead `maintenanceState` looks for the next window. */
export const LOOKAHEAD_MS = 48 * 60 * MINUTE_MS;

/**
 * Whether `nowMs` is inside one of `windows`, and the next window within `lookaheadMs`.
 * Overlapping or touching occurrences are one window: its reason is the first one's, its end the
 * last one's.
 */
export function maintenanceState(
  windows: readonly MaintenanceWindow[],
  nowMs: number,
  lookaheadMs: number = LOOKAHEAD_MS,
): MaintenanceState {
  const found = occurrences(windows, nowMs, nowMs + lookaheadMs);
  const merged: Array<{ startMs: number; endMs: number; reason: string }> = [];
  for (const o of found) {
    const last = merged[merged.length - 1];
    if (last !== undefined && o.startMs <= last.endMs) last.endMs = Math.max(last.endMs, o.endMs);
    else merged.push({ startMs: o.startMs, endMs: o.endMs, reason: o.reason });
  }
  const activeIndex = merged.findIndex((m) => m.startMs <= nowMs && nowMs < m.endMs);
  const active = activeIndex === -1 ? null : (merged[activeIndex] ?? null);
  const next = merged.find((m) => m.startMs > nowMs) ?? null;
  return {
    active,
    next,
    nextEdgeMs: active !== null ? active.endMs : (next?.startMs ?? null),
  };
}
