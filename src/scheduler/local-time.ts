/**
 * A date's calendar fields in the process's local time, as node-cron 4 works them out to match a
 * cron expression, without `Intl`.
 *
 * node-cron splits every date it matches (each tick, and each search for the next one) with
 * `Intl.DateTimeFormat('en-US', …).formatToParts`, also when no time zone is configured. The first
 * such formatter pages in ICU's locale and time-zone data and fills ICU's caches: 8.4 MiB of the
 * daemon's RSS (bench/README.md, "Memory"). Without a time zone node-cron means the process's
 * local time, which is what `Date`'s own getters give. So the build (`nodeCronLocalTime` in
 * `scripts/build-plugins.mjs`) has node-cron's two date functions call these when no time zone is
 * set; `test/scheduler/local-time.test.ts` checks that they agree with node-cron's `Intl` path
 * across time zones and their daylight-saving changes.
 */

const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'] as const;

/** The fields of node-cron's `buildDateParts`, with its `gmt` offset. */
export interface CronDateParts {
  day: number;
  month: number;
  year: number;
  hour: number;
  minute: number;
  second: number;
  millisecond: number;
  weekday: (typeof WEEKDAYS)[number];
  gmt: string;
}

/** `buildDateParts(date)` of node-cron, for the local time zone. */
export function localDateParts(date: Date): CronDateParts {
  return {
    day: date.getDate(),
    month: date.getMonth() + 1,
    year: date.getFullYear(),
    hour: date.getHours(),
    minute: date.getMinutes(),
    second: date.getSeconds(),
    millisecond: date.getMilliseconds(),
    weekday: WEEKDAYS[date.getDay()]!,
    gmt: localGmt(date),
  };
}

/** `getTimezoneGMT(date)` of node-cron, for the local time zone: `Z` or `GMT±HH:MM`. */
export function localGmt(date: Date): string {
  const east = -date.getTimezoneOffset();
  if (east === 0) return 'Z';
  const abs = Math.abs(east);
  const hours = String(Math.floor(abs / 60)).padStart(2, '0');
  const minutes = String(abs % 60).padStart(2, '0');
  return `GMT${east > 0 ? '+' : '-'}${hours}:${minutes}`;
}
