/**
 * `environments[].maintenance` in `validate-config`: one row per bad window, the exact problem
 * lines out, every problem of every window at once; and the overlap warning.
 */
import { describe, expect, it } from 'vitest';
import { formatProblems, parseConfigText } from '../../src/config/index.js';
import { CHECK_LIST } from '../../src/checks/index.js';

const ENV = { ISA_PRODUCTION_API_KEY: 'prod-key-1' };
const CRON =
  'must be a cron expression of 5 fields (minute hour day-of-month month day-of-week), such as "0 2 * * SUN"';
const ISO =
  'must be an ISO 8601 date and time with an offset, such as "2026-12-01T02:00:00Z" or "2026-12-01T03:00:00+01:00"';
const EXISTS = 'must be a date and time that exists';
/** 2026-11-27T00:00:00Z: the overlap warning looks 8 days ahead of this. */
const NOW = Date.UTC(2026, 10, 27);

function withWindows(...windows: string[]): string {
  return [
    'environments:',
    '  - name: production',
    '    base_url: https://api.example.invalid',
    '    lifecycle: { addresses: [{ street1: "123 Main St", zip: "80202" }] }',
    '    maintenance:',
    ...windows.map((w) => `      - ${w}`),
  ].join('\n');
}

function load(yaml: string) {
  return parseConfigText(yaml, { checks: CHECK_LIST, env: ENV, now: () => NOW });
}

const M = 'environments[0].maintenance';

describe('maintenance window problems', () => {
  it.each([
    {
      name: 'a cron expression croner does not read',
      windows: ['{ schedule: "61 2 * * *", duration: 1h, reason: deploy }'],
      problems: [
        `${M}[0].schedule: ${CRON} (got "61 2 * * *"): minute "61" is not valid (0-59; lists, ranges, */steps)`,
      ],
    },
    {
      name: 'a cron expression with every field wrong',
      windows: ['{ schedule: "a 24 32 13 8", duration: 1h, reason: deploy }'],
      problems: [
        `${M}[0].schedule: ${CRON} (got "a 24 32 13 8"): minute "a" is not valid (0-59; lists, ranges, */steps); hour "24" is not valid (0-23; lists, ranges, */steps); day-of-month "32" is not valid (1-31, L, W; lists, ranges, */steps); month "13" is not valid (1-12 or JAN-DEC; lists, ranges, */steps); day-of-week "8" is not valid (0-7 or SUN-SAT, # and L; lists, ranges, */steps)`,
      ],
    },
    {
      name: 'a cron expression with seconds',
      windows: ['{ schedule: "0 0 2 * * *", duration: 1h, reason: deploy }'],
      problems: [`${M}[0].schedule: ${CRON}: windows start on a minute (got "0 0 2 * * *")`],
    },
    {
      name: 'a cron expression that matches no date',
      windows: ['{ schedule: "0 2 30 2 *", duration: 1h, reason: deploy }'],
      problems: [
        `${M}[0].schedule: ${CRON} (got "0 2 30 2 *"): it matches no date: that day never comes in that month`,
      ],
    },
    {
      name: 'a schedule without a duration',
      windows: ['{ schedule: "0 2 * * SUN", reason: deploy }'],
      problems: [
        `${M}[0].duration: is required with schedule: how long each window lasts, such as "2h"`,
      ],
    },
    {
      name: 'a duration without a schedule',
      windows: ['{ duration: 2h, reason: deploy }'],
      problems: [`${M}[0].schedule: is required with duration`],
    },
    {
      name: 'a duration longer than a day',
      windows: ['{ schedule: "0 2 * * SUN", duration: 25h, reason: deploy }'],
      problems: [
        `${M}[0].duration: must be at most 24h: a longer window is written with start and end (got "25h")`,
      ],
    },
    {
      name: 'an unknown time zone',
      windows: ['{ schedule: "0 2 * * SUN", duration: 1h, timezone: Mars/Olympus, reason: x }'],
      problems: [
        `${M}[0].timezone: must be an IANA time zone such as "America/New_York" or "Europe/Berlin" (got "Mars/Olympus")`,
      ],
    },
    {
      name: 'an end before its start',
      windows: [
        '{ start: "2026-12-01T04:00:00Z", end: "2026-12-01T02:00:00Z", reason: migration }',
      ],
      problems: [
        `${M}[0].end: must be after start (2026-12-01T04:00:00.000Z), got 2026-12-01T02:00:00.000Z`,
      ],
    },
    {
      name: 'a time without an offset, and a start without an end',
      windows: ['{ start: "2026-12-01 02:00", reason: migration }'],
      problems: [
        `${M}[0].start: ${ISO} (got "2026-12-01 02:00")`,
        `${M}[0].end: is required with start`,
      ],
    },
    {
      name: 'days that do not exist: February 30 and 31, April 31',
      windows: [
        '{ start: "2026-02-30T02:00:00Z", end: "2026-03-03T02:00:00Z", reason: migration }',
        '{ start: "2026-02-01T02:00:00Z", end: "2026-02-31T02:00:00Z", reason: migration }',
        '{ start: "2026-04-31T02:00:00+02:00", end: "2026-05-02T02:00:00Z", reason: migration }',
        '{ start: "2027-02-29T02:00:00Z", end: "2027-03-01T02:00:00Z", reason: migration }',
      ],
      problems: [
        `${M}[0].start: ${EXISTS}: February 2026 has 28 days (got "2026-02-30T02:00:00Z")`,
        `${M}[1].end: ${EXISTS}: February 2026 has 28 days (got "2026-02-31T02:00:00Z")`,
        `${M}[2].start: ${EXISTS}: April 2026 has 30 days (got "2026-04-31T02:00:00+02:00")`,
        `${M}[3].start: ${EXISTS}: February 2027 has 28 days (got "2027-02-29T02:00:00Z")`,
      ],
    },
    {
      name: 'times and months that do not exist: 24:00, minute 60, month 13, day 0, offset +24:00',
      windows: [
        '{ start: "2026-12-01T24:00:00Z", end: "2026-12-02T02:00:00Z", reason: migration }',
        '{ start: "2026-12-01T02:60Z", end: "2026-13-01T02:00:00Z", reason: migration }',
        '{ start: "2026-12-00T02:00:00Z", end: "2026-12-02T02:00:00+24:00", reason: migration }',
      ],
      problems: [
        `${M}[0].start: ${EXISTS}: the hour is 00-23 (got "2026-12-01T24:00:00Z")`,
        `${M}[1].start: ${EXISTS}: the minute is 00-59 (got "2026-12-01T02:60Z")`,
        `${M}[1].end: ${EXISTS}: the month is 01-12 (got "2026-13-01T02:00:00Z")`,
        `${M}[2].start: ${EXISTS}: December 2026 has 31 days (got "2026-12-00T02:00:00Z")`,
        `${M}[2].end: ${EXISTS}: the offset is at most 23:59 (got "2026-12-02T02:00:00+24:00")`,
      ],
    },
    {
      name: 'both kinds in one window',
      windows: [
        '{ schedule: "0 2 * * *", duration: 1h, start: "2026-12-01T02:00:00Z", end: "2026-12-01T03:00:00Z", reason: x }',
      ],
      problems: [
        `${M}[0]: is either recurring (schedule and duration) or fixed (start and end), not both`,
      ],
    },
    {
      name: 'neither kind, no reason and an unknown key',
      windows: ['{ until: tomorrow }'],
      problems: [
        `${M}[0].reason: is required: say why, the status page shows it`,
        `${M}[0].until: unknown key`,
        `${M}[0]: needs either schedule and duration (recurring) or start and end (fixed)`,
      ],
    },
    {
      name: 'every problem of every window at once',
      windows: [
        '{ schedule: "* * *", reason: "" }',
        '{ start: "2026-12-02T00:00:00Z", end: "2026-12-01T00:00:00Z", reason: x }',
      ],
      problems: [
        `${M}[0].schedule: ${CRON}: windows start on a minute (got "* * *")`,
        `${M}[0].reason: must not be empty: say why, the status page shows it`,
        `${M}[0].duration: is required with schedule: how long each window lasts, such as "2h"`,
        `${M}[1].end: must be after start (2026-12-02T00:00:00.000Z), got 2026-12-01T00:00:00.000Z`,
      ],
    },
  ])('$name', ({ windows, problems }) => {
    const result = load(withWindows(...windows));
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(formatProblems(result.problems).split('\n')).toEqual(problems);
  });
});

describe('maintenance windows that pass', () => {
  it('resolve to recurring and fixed windows, without warnings when apart', () => {
    const result = load(
      withWindows(
        '{ schedule: "0 2 * * SUN", duration: 2h, timezone: America/New_York, reason: weekly deploy }',
        '{ start: "2026-12-01T02:00:00Z", end: "2026-12-01T03:30:00Z", reason: database migration }',
      ),
    );
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.warnings).toEqual([]);
    const [recurring, fixed] = result.config.environments[0]?.maintenance ?? [];
    expect(recurring).toMatchObject({
      kind: 'recurring',
      schedule: '0 2 * * SUN',
      durationMs: 2 * 3_600_000,
      timezone: 'America/New_York',
      reason: 'weekly deploy',
    });
    expect(fixed).toEqual({
      kind: 'fixed',
      startMs: Date.UTC(2026, 11, 1, 2),
      endMs: Date.UTC(2026, 11, 1, 3, 30),
      reason: 'database migration',
    });
  });

  it('accept February 29 of a leap year', () => {
    const result = load(
      withWindows('{ start: "2028-02-29T02:00:00Z", end: "2028-02-29T03:00:00Z", reason: leap }'),
    );
    expect(result.ok && result.config.environments[0]?.maintenance?.[0]).toMatchObject({
      startMs: Date.UTC(2028, 1, 29, 2),
    });
  });

  it('is an empty list by default', () => {
    const result = load(withWindows().replace(/\n\s+maintenance:$/, ''));
    expect(result.ok && result.config.environments[0]?.maintenance).toEqual([]);
  });

  it.each([
    {
      name: 'a fixed window inside a recurring one',
      windows: [
        '{ schedule: "0 1 * * *", duration: 3h, timezone: UTC, reason: nightly }',
        '{ start: "2026-12-10T02:00:00Z", end: "2026-12-10T02:30:00Z", reason: migration }',
      ],
      warnings: [
        `${M}[1]: overlaps maintenance[0] (from 2026-12-10T02:00:00.000Z): overlapping windows act as one window, from the first start to the last end`,
      ],
    },
    {
      name: 'a recurring window longer than its period',
      windows: ['{ schedule: "0 */2 * * *", duration: 3h, timezone: UTC, reason: churn }'],
      warnings: [
        `${M}[0]: overlaps its own previous occurrence (from 2026-11-27T00:00:00.000Z): overlapping windows act as one window, from the first start to the last end`,
      ],
    },
  ])('warns of $name', ({ windows, warnings }) => {
    const result = load(withWindows(...windows));
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(formatProblems(result.warnings).split('\n')).toEqual(warnings);
  });
});
