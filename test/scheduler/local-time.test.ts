import { afterEach, describe, expect, it } from 'vitest';
// node-cron's own date splitting, unpatched (the build patches it, tests import the package):
// with an explicit time zone it takes the `Intl` path that `localDateParts` stands in for.
// @ts-expect-error: node-cron publishes no types for its internal module
import { L as LocalizedTime } from '../../node_modules/node-cron/dist/_shared.js';
import { localDateParts, localGmt } from '../../src/scheduler/local-time.js';

interface Localized {
  getParts(): Record<string, unknown>;
}
const Reference = LocalizedTime as unknown as new (date: Date, timezone?: string) => Localized;

const HOUR = 3_600_000;
const originalTz = process.env['TZ'];

afterEach(() => {
  if (originalTz === undefined) delete process.env['TZ'];
  else process.env['TZ'] = originalTz;
});

/** Every `stepMs` through 2026, and minute by minute around each change of the zone's offset. */
function datesOf2026(stepMs: number): Date[] {
  const start = Date.UTC(2026, 0, 1);
  const end = Date.UTC(2027, 0, 1);
  const dates: Date[] = [];
  let previousOffset = new Date(start).getTimezoneOffset();
  for (let t = start; t < end; t += stepMs) {
    const offset = new Date(t).getTimezoneOffset();
    if (offset !== previousOffset) {
      for (let m = t - 2 * HOUR; m < t + 2 * HOUR; m += 60_000 + 1_234) dates.push(new Date(m));
      previousOffset = offset;
    }
    dates.push(new Date(t));
  }
  return dates;
}

describe('localDateParts', () => {
  it.each([
    'UTC',
    'America/New_York',
    'Europe/Berlin',
    'Asia/Kolkata',
    'Australia/Lord_Howe',
    'Pacific/Chatham',
    'America/St_Johns',
  ])('gives node-cron the fields and offset Intl gives, in %s', (zone) => {
    process.env['TZ'] = zone;
    const dates = datesOf2026(HOUR - 7_777);
    expect(dates.length).toBeGreaterThan(8_000);
    // The zones with daylight saving changed offset, so the minute-by-minute stretches ran.
    if (zone !== 'UTC' && zone !== 'Asia/Kolkata') {
      expect(new Set(dates.map((d) => d.getTimezoneOffset())).size).toBe(2);
    }
    for (const date of dates) {
      expect({ ...localDateParts(date) }, date.toISOString()).toEqual({
        ...new Reference(date, zone).getParts(),
      });
    }
  });

  it('writes the offset as node-cron does', () => {
    process.env['TZ'] = 'UTC';
    expect(localGmt(new Date(0))).toBe('Z');
    process.env['TZ'] = 'Asia/Kolkata';
    expect(localGmt(new Date(0))).toBe('GMT+05:30');
    process.env['TZ'] = 'America/St_Johns';
    expect(localGmt(new Date(Date.UTC(2026, 0, 15)))).toBe('GMT-03:30');
  });
});
