/**
 * `environments[].maintenance` (docs/configuration.md, "Maintenance windows"): the schema of the
 * list, its resolved form, and the warning about windows that overlap. A window is either
 * recurring (`schedule` + `duration`, optional `timezone`) or fixed (`start` + `end`); both need
 * a `reason`, which the status page shows. Every problem of every window is reported at once.
 */
import { parse as parseCron, validateDetailed } from 'node-cron';
import { z } from 'zod';
import {
  MAX_RECURRING_DURATION_MS,
  cronFieldsOf,
  isKnownTimeZone,
  occurrences,
  type MaintenanceWindow,
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

/** The cron expression, checked by node-cron's parser, and limited to what windows evaluate. */
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
    const check = validateDetailed(text);
    if (!check.valid) {
      const detail = check.errors.map((e) => e.message).join('; ');
      ctx.addIssue({ code: 'custom', message: `${CRON_HINT} ${got}: ${detail}` });
      return;
    }
    if (cronFieldsOf(parseCron(text)) === null) {
      ctx.addIssue({
        code: 'custom',
        message: `must not use L, W or # in its day fields (got ${describeValue(text)})`,
      });
    }
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

/** `environments[].maintenance`: a list of windows, empty by default. */
export const maintenanceSchema = z.array(windowSchema).default([]);

export type MaintenanceDocument = z.output<typeof maintenanceSchema>;

/** The windows of one environment as the daemon evaluates them. */
export function toMaintenanceWindows(doc: MaintenanceDocument): MaintenanceWindow[] {
  return doc.map((w): MaintenanceWindow => {
    if (w.schedule !== undefined && w.duration !== undefined) {
      const fields = cronFieldsOf(parseCron(w.schedule));
      if (fields === null) throw new Error(`internal: unchecked schedule ${w.schedule}`);
      return {
        kind: 'recurring',
        schedule: w.schedule,
        fields,
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
 * One warning per window that overlaps an earlier window of its environment (or whose own
 * occurrences overlap): valid, as overlapping windows act as one, but usually a mistake. Fixed
 * windows are compared over their whole span, recurring ones over the next 8 days from `nowMs`
 * and around every fixed window.
 */
export function maintenanceWarnings(
  environments: ReadonlyArray<{ maintenance?: readonly MaintenanceWindow[] }>,
  nowMs: number,
): ConfigProblem[] {
  return environments.flatMap((env, e) => {
    const windows = env.maintenance ?? [];
    if (windows.length === 0) return [];
    const spans: Array<[number, number]> = [[nowMs, nowMs + OVERLAP_HORIZON_MS]];
    for (const w of windows) if (w.kind === 'fixed') spans.push([w.startMs, w.endMs]);
    const reported = new Map<number, ConfigProblem>();
    for (const [from, to] of spans) {
      // A fixed window longer than the horizon is compared over its first 8 days.
      const found = occurrences(windows, from, Math.min(to, from + OVERLAP_HORIZON_MS));
      found.forEach((o, i) => {
        for (const earlier of found.slice(0, i)) {
          if (earlier.endMs <= o.startMs || reported.has(o.window)) continue;
          const other =
            earlier.window === o.window
              ? 'its own previous occurrence'
              : `maintenance[${earlier.window}]`;
          reported.set(o.window, {
            path: `environments[${e}].maintenance[${o.window}]`,
            message: `overlaps ${other} (from ${new Date(o.startMs).toISOString()}): overlapping windows act as one window, from the first start to the last end`,
          });
        }
      });
    }
    return [...reported.values()].sort((a, b) => a.path.localeCompare(b.path));
  });
}
