/**
 * `environments[].maintenance` (docs/configuration.md, "Maintenance windows"): the schema of the
 * list, its resolved form, and the warning about windows that overlap. A window is either
 * recurring (`schedule` + `duration`, optional `timezone`) or fixed (`start` + `end`); both need
 * a `reason`, which the status page shows. Every problem of every window is reported at once.
 */
import { z } from 'zod';
import {
  MAX_RECURRING_DURATION_MS,
  cronJob,
  isKnownTimeZone,
  startsOf,
  type MaintenanceWindow,
  type Occurrence,
} from '../maintenance/windows.js';
import { describeValue, type ConfigProblem } from './problems.js';
import { WHEN_MAPPING, duration, isMs, type Loose } from './rules.js';

/** The longest reason: it is shown on the status page in one line. */
export const MAX_REASON_LENGTH = 200;

/** ISO 8601 date and time with an offset: a time without one would depend on the host. */
const ISO_TIME =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,3})?)?(?:Z|[+-](\d{2}):(\d{2}))$/;
const ISO_HINT =
  'must be an ISO 8601 date and time with an offset, such as "2026-12-01T02:00:00Z" or "2026-12-01T03:00:00+01:00"';
const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
] as const;

/**
 * Why the fields of an ISO 8601 time are not a real date and time, or null when they are.
 * `Date.parse` rolls an impossible day over into the next month (02-30 is March 2) and reads
 * 24:00 as the next midnight, so a window would run on another day than the one written.
 */
function impossibleTime(fields: readonly (string | undefined)[]): string | null {
  const [year, month, day, hour, minute, second, offsetHours, offsetMinutes] = fields.map(Number);
  const monthName = MONTHS[(month ?? 0) - 1];
  if (monthName === undefined) return 'the month is 01-12';
  const daysInMonth = new Date(Date.UTC(year ?? 0, month ?? 0, 0)).getUTCDate();
  if ((day ?? 0) < 1 || (day ?? 0) > daysInMonth) {
    return `${monthName} ${year} has ${daysInMonth} days`;
  }
  if ((hour ?? 0) > 23) return 'the hour is 00-23';
  if ((minute ?? 0) > 59) return 'the minute is 00-59';
  if (!Number.isNaN(second) && (second ?? 0) > 59) return 'the second is 00-59';
  if (!Number.isNaN(offsetHours) && ((offsetHours ?? 0) > 23 || (offsetMinutes ?? 0) > 59)) {
    return 'the offset is at most 23:59';
  }
  return null;
}

const isoTime = z
  .string({ error: (issue) => `${ISO_HINT} (got ${describeValue(issue.input)})` })
  .transform((text, ctx) => {
    const match = ISO_TIME.exec(text);
    const impossible = match === null ? null : impossibleTime(match.slice(1));
    if (impossible !== null) {
      ctx.addIssue({
        code: 'custom',
        message: `must be a date and time that exists: ${impossible} (got ${describeValue(text)})`,
      });
      return z.NEVER;
    }
    const ms = match === null ? NaN : Date.parse(text);
    if (Number.isNaN(ms)) {
      ctx.addIssue({ code: 'custom', message: `${ISO_HINT} (got ${describeValue(text)})` });
      return z.NEVER;
    }
    return ms;
  });

const CRON_HINT =
  'must be a cron expression of 5 fields (minute hour day-of-month month day-of-week), such as "0 2 * * SUN"';

/** Each field of a schedule: its name in messages and the values it takes. */
const CRON_FIELDS = [
  ['minute', '0-59'],
  ['hour', '0-23'],
  ['day-of-month', '1-31, L, W'],
  ['month', '1-12 or JAN-DEC'],
  ['day-of-week', '0-7 or SUN-SAT, # and L'],
] as const;

/**
 * What is wrong with a five-field `schedule`, as croner reads it, or null. A field croner refuses
 * is named by trying it alone beside four `*`, so every wrong field is reported at once.
 */
function scheduleProblem(schedule: string, fields: readonly string[]): string | null {
  let job;
  try {
    job = cronJob(schedule);
  } catch (err) {
    const wrong = CRON_FIELDS.flatMap(([name, values], i) => {
      const alone = fields.map((f, j) => (j === i ? f : '*')).join(' ');
      try {
        cronJob(alone);
        return [];
      } catch {
        return [`${name} "${fields[i] ?? ''}" is not valid (${values}; lists, ranges, */steps)`];
      }
    });
    return wrong.length > 0 ? wrong.join('; ') : String((err as Error).message);
  }
  // croner searches up to the year 9999 for a date that never comes (February 30): 40-80 ms.
  return job.nextRun(new Date(0)) === null
    ? 'it matches no date: that day never comes in that month'
    : null;
}

/** The cron expression, checked by croner's parser, five fields. */
const cronSchedule = z
  .string({ error: (issue) => `${CRON_HINT} (got ${describeValue(issue.input)})` })
  .superRefine((text, ctx) => {
    const got = `(got ${describeValue(text)})`;
    const fields = text.trim().split(/\s+/);
    if (fields.length !== 5) {
      ctx.addIssue({
        code: 'custom',
        message: `${CRON_HINT}: windows start on a minute ${got}`,
      });
      return;
    }
    const problem = scheduleProblem(text, fields);
    if (problem !== null)
      ctx.addIssue({ code: 'custom', message: `${CRON_HINT} ${got}: ${problem}` });
  });

const windowSchema = z
  .strictObject({
    schedule: cronSchedule.optional(),
    duration: duration((ms, text) => {
      if (ms <= 0) return 'must be greater than 0';
      return ms > MAX_RECURRING_DURATION_MS
        ? `must be at most 24h: a longer window is written with start and end (got ${describeValue(text)})`
        : undefined;
    }).optional(),
    timezone: z
      .string()
      .refine(isKnownTimeZone, {
        error: (issue) =>
          `must be an IANA time zone such as "America/New_York" or "Europe/Berlin" (got ${describeValue(issue.input)})`,
      })
      .optional(),
    start: isoTime.optional(),
    end: isoTime.optional(),
    reason: z
      .string({
        error: (issue) =>
          issue.input === undefined
            ? 'is required: say why, the status page shows it'
            : `must be a string (got ${describeValue(issue.input)})`,
      })
      .trim()
      .min(1, { error: 'must not be empty: say why, the status page shows it' })
      .max(MAX_REASON_LENGTH, { error: `must be at most ${MAX_REASON_LENGTH} characters` }),
  })
  .superRefine((value, issues) => {
    const v = value as Loose;
    const has = (key: string) => v[key] !== undefined;
    const recurring = has('schedule') || has('duration') || has('timezone');
    const fixed = has('start') || has('end');
    if (recurring && fixed) {
      issues.addIssue({
        code: 'custom',
        message: 'is either recurring (schedule and duration) or fixed (start and end), not both',
      });
      return;
    }
    if (!recurring && !fixed) {
      issues.addIssue({
        code: 'custom',
        message: 'needs either schedule and duration (recurring) or start and end (fixed)',
      });
      return;
    }
    if (recurring) {
      if (!has('schedule')) {
        issues.addIssue({
          code: 'custom',
          path: ['schedule'],
          message: 'is required with duration',
        });
      }
      if (!has('duration')) {
        issues.addIssue({
          code: 'custom',
          path: ['duration'],
          message: 'is required with schedule: how long each window lasts, such as "2h"',
        });
      }
      return;
    }
    if (!has('start'))
      issues.addIssue({ code: 'custom', path: ['start'], message: 'is required with end' });
    if (!has('end'))
      issues.addIssue({ code: 'custom', path: ['end'], message: 'is required with start' });
    const start = v['start'];
    const end = v['end'];
    if (isMs(start) && isMs(end) && end <= start) {
      issues.addIssue({
        code: 'custom',
        path: ['end'],
        message: `must be after start (${new Date(start).toISOString()}), got ${new Date(end).toISOString()}`,
      });
    }
  }, WHEN_MAPPING);

/**
 * The most windows one environment may list. A reload validates on the daemon's main thread,
 * about a millisecond per window (bench/README.md, "Maintenance windows"); a planned-work calendar
 * needs a few dozen.
 */
export const MAX_WINDOWS = 100;

/**
 * `environments[].maintenance`: a list of windows, empty by default. The count is checked before
 * the windows, so an overlong list is refused without validating each of its windows.
 */
export const maintenanceSchema = z
  .array(z.unknown())
  .max(MAX_WINDOWS, {
    error: (issue) =>
      `must list at most ${MAX_WINDOWS} windows (got ${Array.isArray(issue.input) ? issue.input.length : '?'}): merge adjacent ones, or write a recurring one with schedule`,
  })
  .pipe(z.array(windowSchema))
  .default([]);

export type MaintenanceDocument = z.output<typeof maintenanceSchema>;

/** The windows of one environment as the daemon evaluates them. */
export function toMaintenanceWindows(doc: MaintenanceDocument): MaintenanceWindow[] {
  return doc.map((w): MaintenanceWindow => {
    if (w.schedule !== undefined && w.duration !== undefined) {
      return {
        kind: 'recurring',
        schedule: w.schedule,
        durationMs: w.duration,
        timezone: w.timezone ?? null,
        reason: w.reason,
      };
    }
    if (w.start === undefined || w.end === undefined) {
      throw new Error('internal: a window without schedule or start passed validation');
    }
    return { kind: 'fixed', startMs: w.start, endMs: w.end, reason: w.reason };
  });
}

/** How far ahead overlaps of recurring windows are looked for: a week covers weekly schedules. */
export const OVERLAP_HORIZON_MS = 8 * 24 * 60 * 60_000;

/**
 * How many starts of recurring windows the overlap check of one environment computes in all,
 * shared evenly among its recurring windows: it bounds the check's time (bench/README.md,
 * "Maintenance windows") for schedules that start every few minutes.
 */
export const RECURRING_STARTS_COMPARED = 1_000;

/**
 * One warning per window that overlaps another window of its environment (or whose own
 * occurrences overlap): valid, as overlapping windows act as one, but usually a mistake. Fixed
 * windows are compared over their whole span; recurring ones over the next 8 days from `nowMs`
 * and around every fixed window (docs/configuration.md, "Maintenance windows").
 */
export function maintenanceWarnings(
  environments: ReadonlyArray<{ maintenance?: readonly MaintenanceWindow[] }>,
  nowMs: number,
): ConfigProblem[] {
  return environments.flatMap((env, e) =>
    firstOverlaps(comparedOccurrences(env.maintenance ?? [], nowMs)).map(
      ({ window, other, startMs }) => ({
        path: `environments[${e}].maintenance[${window}]`,
        message: `overlaps ${other === window ? 'its own previous occurrence' : `maintenance[${other}]`} (from ${new Date(startMs).toISOString()}): overlapping windows act as one window, from the first start to the last end`,
      }),
    ),
  );
}

/**
 * The spans recurring windows are compared over: the horizon from `nowMs` and each fixed window
 * (its first 8 days), merged where they overlap or touch, by start.
 */
function comparedSpans(
  windows: readonly MaintenanceWindow[],
  nowMs: number,
): Array<[number, number]> {
  const spans: Array<[number, number]> = [[nowMs, nowMs + OVERLAP_HORIZON_MS]];
  for (const w of windows) {
    if (w.kind === 'fixed')
      spans.push([w.startMs, Math.min(w.endMs, w.startMs + OVERLAP_HORIZON_MS)]);
  }
  spans.sort((a, b) => a[0] - b[0]);
  const merged: Array<[number, number]> = [];
  for (const span of spans) {
    const last = merged[merged.length - 1];
    if (last !== undefined && span[0] <= last[1]) last[1] = Math.max(last[1], span[1]);
    else merged.push([span[0], span[1]]);
  }
  return merged;
}

/**
 * Every fixed window, and the starts of each recurring window over the compared spans (at most
 * its share of `RECURRING_STARTS_COMPARED`), once each, by start then window.
 */
function comparedOccurrences(windows: readonly MaintenanceWindow[], nowMs: number): Occurrence[] {
  const recurring = windows.filter((w) => w.kind === 'recurring').length;
  const share = Math.ceil(RECURRING_STARTS_COMPARED / Math.max(1, recurring));
  const spans = recurring > 0 ? comparedSpans(windows, nowMs) : [];
  const found: Occurrence[] = [];
  windows.forEach((w, window) => {
    if (w.kind === 'fixed') {
      found.push({ startMs: w.startMs, endMs: w.endMs, reason: w.reason, window });
      return;
    }
    let left = share;
    for (const [from, to] of spans) {
      if (left <= 0) break;
      // A start just after `from - duration` still lasts into the span.
      for (const startMs of startsOf(w, from - w.durationMs + 1, to, left)) {
        found.push({ startMs, endMs: startMs + w.durationMs, reason: w.reason, window });
        left--;
      }
    }
  });
  found.sort((a, b) => a.startMs - b.startMs || a.window - b.window);
  // Adjacent spans may both hold a start that lies between them.
  return found.filter(
    (o, i) => i === 0 || o.startMs !== found[i - 1]?.startMs || o.window !== found[i - 1]?.window,
  );
}

/**
 * Sort-and-sweep over occurrences by start: an occurrence overlaps an earlier one exactly when it
 * starts before the furthest end so far (touching is not overlapping). The first such occurrence
 * of each window, with the window that reaches furthest, by window.
 */
export function firstOverlaps(
  byStart: readonly Occurrence[],
): Array<{ window: number; other: number; startMs: number }> {
  const first = new Map<number, { window: number; other: number; startMs: number }>();
  let reach: Occurrence | undefined;
  for (const o of byStart) {
    if (reach !== undefined && o.startMs < reach.endMs && !first.has(o.window)) {
      first.set(o.window, { window: o.window, other: reach.window, startMs: o.startMs });
    }
    if (reach === undefined || o.endMs > reach.endMs) reach = o;
  }
  return [...first.values()].sort((a, b) => a.window - b.window);
}
