/**
 * Maintenance windows (docs/configuration.md, "Maintenance windows"): when each window of an
 * environment starts and ends, and whether a moment is inside one. Pure functions of a time in
 * milliseconds, so the daemon's timer and the tests on a fake clock compute the same thing.
 *
 * A recurring window starts at each minute its cron expression matches and lasts its duration.
 * node-cron parses the expression (the same syntax as its schedules); the matching is done here,
 * minute by minute of UTC, reading the wall clock of the window's time zone. node-cron's own
 * matcher would need a registered task per window and a formatting of every candidate second;
 * this walk skips days, hours and minutes that cannot match, so one evaluation over the next two
 * days costs under a millisecond for a daily or weekly schedule (about 2 ms for one every 15
 * minutes in a time zone), and it runs only at window edges (docs/configuration.md).
 * Across a DST change a wall-clock time that does not exist that day (02:30 when clocks spring
 * forward) starts no window, and one that occurs twice (01:30 when they fall back) starts two.
 * A time zone costs an `Intl.DateTimeFormat` (about 8 MiB of RSS once used); without `timezone`
 * the process's local time is read with `Date`'s own getters and none is created.
 */
import type { ParsedFields } from 'node-cron';

const MINUTE_MS = 60_000;

/** One configured window, as `config/` resolves it. */
export type MaintenanceWindow =
  | {
      kind: 'recurring';
      /** The cron expression, five fields (minute hour day-of-month month day-of-week). */
      schedule: string;
      /** The expression's fields as node-cron parses them (numbers only: no L, W or #). */
      fields: CronFields;
      durationMs: number;
      /** IANA time zone of the expression; null: the process's local time. */
      timezone: string | null;
      reason: string;
    }
  | { kind: 'fixed'; startMs: number; endMs: number; reason: string };

/** The numeric fields of a parsed cron expression. */
export interface CronFields {
  minute: ReadonlySet<number>;
  hour: ReadonlySet<number>;
  dayOfMonth: ReadonlySet<number>;
  month: ReadonlySet<number>;
  dayOfWeek: ReadonlySet<number>;
}

/** One occurrence of a window: `[startMs, endMs)`, with the window's index and reason. */
export interface Occurrence {
  startMs: number;
  endMs: number;
  reason: string;
  window: number;
}

/**
 * node-cron's parsed fields as sets of numbers, or null when a day field uses a token this module
 * does not evaluate (`L`, `W`, `#`), which the configuration reports.
 */
export function cronFieldsOf(parsed: ParsedFields): CronFields | null {
  const numbers = (values: ReadonlyArray<number | string>): Set<number> | null =>
    values.every((v) => typeof v === 'number') ? new Set(values as number[]) : null;
  const dayOfMonth = numbers(parsed.dayOfMonth);
  const dayOfWeek = numbers(parsed.dayOfWeek);
  if (dayOfMonth === null || dayOfWeek === null) return null;
  // Sunday may be written 7; node-cron already maps it to 0, this keeps it so if that changes.
  if (dayOfWeek.has(7)) dayOfWeek.add(0);
  return {
    minute: new Set(parsed.minute),
    hour: new Set(parsed.hour),
    dayOfMonth,
    month: new Set(parsed.month),
    dayOfWeek,
  };
}

interface WallClock {
  minute: number;
  hour: number;
  day: number;
  month: number;
  weekday: number;
}

const WEEKDAYS: Readonly<Record<string, number>> = {
  Sun: 0,
  Mon: 1,
  Tue: 2,
  Wed: 3,
  Thu: 4,
  Fri: 5,
  Sat: 6,
};

const formatters = new Map<string, Intl.DateTimeFormat>();

/** Reads the wall clock of `timezone` (null: the process's local time) at `ms`. */
function wallClock(ms: number, timezone: string | null): WallClock {
  if (timezone === null) {
    const d = new Date(ms);
    return {
      minute: d.getMinutes(),
      hour: d.getHours(),
      day: d.getDate(),
      month: d.getMonth() + 1,
      weekday: d.getDay(),
    };
  }
  let format = formatters.get(timezone);
  if (format === undefined) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: timezone,
      hourCycle: 'h23',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      weekday: 'short',
    });
    formatters.set(timezone, format);
  }
  const parts: Record<string, string> = {};
  for (const part of format.formatToParts(ms)) parts[part.type] = part.value;
  return {
    minute: Number(parts['minute']),
    hour: Number(parts['hour']) % 24,
    day: Number(parts['day']),
    month: Number(parts['month']),
    weekday: WEEKDAYS[parts['weekday'] ?? ''] ?? -1,
  };
}

/** Whether `timezone` is a time zone this runtime knows (node-cron's `timezone` option). */
export function isKnownTimeZone(timezone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
    return true;
  } catch {
    return false;
  }
}

/**
 * The minutes in `[fromMs, toMs)` at which `fields` match, in order, read on the wall clock of
 * `timezone`; at most `limit` of them.
 */
export function cronMatches(
  fields: CronFields,
  timezone: string | null,
  fromMs: number,
  toMs: number,
  limit = Infinity,
): number[] {
  const out: number[] = [];
  let t = Math.ceil(fromMs / MINUTE_MS) * MINUTE_MS;
  while (t < toMs && out.length < limit) {
    const c = wallClock(t, timezone);
    if (
      !fields.month.has(c.month) ||
      !fields.dayOfMonth.has(c.day) ||
      !fields.dayOfWeek.has(c.weekday)
    ) {
      // To the next local midnight. Across a DST change this lands an hour early (checked again)
      // or an hour late, which only skips wall-clock times that do not exist that day.
      t += ((23 - c.hour) * 60 + (60 - c.minute)) * MINUTE_MS;
    } else if (!fields.hour.has(c.hour)) {
      t += (60 - c.minute) * MINUTE_MS;
    } else {
      if (fields.minute.has(c.minute)) out.push(t);
      // To the next matching minute of this hour, or to the next hour.
      let step = 1;
      while (c.minute + step < 60 && !fields.minute.has(c.minute + step)) step++;
      t += step * MINUTE_MS;
    }
  }
  return out;
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
    for (const startMs of cronMatches(w.fields, w.timezone, fromMs - w.durationMs + 1, toMs)) {
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
