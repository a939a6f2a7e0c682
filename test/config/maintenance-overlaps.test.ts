/**
 * The overlap warning of maintenance windows (docs/configuration.md, "Maintenance windows"): which
 * windows overlap, by a sort-and-sweep over fixed windows and the starts of recurring ones; edge
 * cases of touching and equal starts, recurring against fixed, and the limit on the window count.
 */
import { describe, expect, it } from 'vitest';
import { formatProblems, parseConfigText } from '../../src/config/index.js';
import { CHECK_LIST } from '../../src/checks/index.js';
import { MAX_WINDOWS } from '../../src/config/maintenance.js';

/** 2026-11-27T00:00:00Z: recurring windows are compared over the 8 days after it. */
const NOW = Date.UTC(2026, 10, 27);
const M = 'environments[0].maintenance';
const ACT_AS_ONE = 'overlapping windows act as one window, from the first start to the last end';

function load(...windows: string[]) {
  const yaml = [
    'environments:',
    '  - name: production',
    '    base_url: https://api.example.invalid',
    '    lifecycle: { enabled: false }',
    '    maintenance:',
    ...windows.map((w) => `      - ${w}`),
  ].join('\n');
  return parseConfigText(yaml, {
    checks: CHECK_LIST,
    env: { ISA_PRODUCTION_API_KEY: 'prod-key-1' },
    now: () => NOW,
  });
}

const fixed = (start: string, end: string, reason = 'work') =>
  `{ start: "2026-12-01T${start}:00Z", end: "2026-12-01T${end}:00Z", reason: ${reason} }`;

function warnings(...windows: string[]): string[] {
  const result = load(...windows);
  if (!result.ok) throw new Error(formatProblems(result.problems));
  return result.warnings.length === 0 ? [] : formatProblems(result.warnings).split('\n');
}

const overlap = (window: number, other: string, from: string) =>
  `${M}[${window}]: overlaps ${other} (from ${from}): ${ACT_AS_ONE}`;

describe('the overlap warning', () => {
  it.each([
    {
      name: 'windows that touch do not overlap',
      windows: [fixed('02:00', '03:00'), fixed('03:00', '04:00'), fixed('01:00', '02:00')],
      warnings: [],
    },
    {
      name: 'windows with the same start overlap, reported on the later-listed one',
      windows: [fixed('02:00', '03:00'), fixed('02:00', '02:30')],
      warnings: [overlap(1, 'maintenance[0]', '2026-12-01T02:00:00.000Z')],
    },
    {
      name: 'a window overlapping one listed after it is reported on the later-starting one',
      windows: [fixed('02:30', '04:00'), fixed('02:00', '03:00')],
      warnings: [overlap(0, 'maintenance[1]', '2026-12-01T02:30:00.000Z')],
    },
    {
      name: 'a long window overlaps every window it contains, not only the next one',
      windows: [
        fixed('01:00', '06:00'),
        fixed('02:00', '02:30'),
        fixed('03:00', '03:30'),
        fixed('07:00', '08:00'),
      ],
      warnings: [
        overlap(1, 'maintenance[0]', '2026-12-01T02:00:00.000Z'),
        overlap(2, 'maintenance[0]', '2026-12-01T03:00:00.000Z'),
      ],
    },
    {
      name: 'a recurring window against a fixed one inside the horizon',
      windows: [
        '{ schedule: "0 2 * * *", duration: 1h, timezone: UTC, reason: nightly }',
        fixed('02:59', '04:00'),
      ],
      warnings: [overlap(1, 'maintenance[0]', '2026-12-01T02:59:00.000Z')],
    },
    {
      name: 'a recurring window touching a fixed one does not overlap',
      windows: [
        '{ schedule: "0 2 * * *", duration: 1h, timezone: UTC, reason: nightly }',
        fixed('03:00', '04:00'),
        fixed('01:00', '02:00'),
      ],
      warnings: [],
    },
    {
      name: 'a recurring window starting inside a fixed one far beyond the horizon',
      windows: [
        '{ start: "2027-06-01T00:00:00Z", end: "2027-06-01T03:00:00Z", reason: migration }',
        '{ schedule: "30 2 1 6 *", duration: 10m, timezone: UTC, reason: yearly }',
      ],
      warnings: [overlap(1, 'maintenance[0]', '2027-06-01T02:30:00.000Z')],
    },
    {
      name: 'two recurring windows with the same start',
      windows: [
        '{ schedule: "0 2 * * *", duration: 1h, timezone: UTC, reason: a }',
        '{ schedule: "0 2 * * SUN", duration: 10m, timezone: UTC, reason: b }',
      ],
      warnings: [overlap(1, 'maintenance[0]', '2026-11-29T02:00:00.000Z')],
    },
    {
      name: 'a start lying in two compared spans is not its own previous occurrence',
      windows: [
        '{ schedule: "0 0 * * *", duration: 23h, timezone: UTC, reason: daily }',
        '{ start: "2027-01-10T01:00:00Z", end: "2027-01-10T01:01:00Z", reason: a }',
        '{ start: "2027-01-10T05:00:00Z", end: "2027-01-10T05:01:00Z", reason: b }',
      ],
      warnings: [
        overlap(1, 'maintenance[0]', '2027-01-10T01:00:00.000Z'),
        overlap(2, 'maintenance[0]', '2027-01-10T05:00:00.000Z'),
      ],
    },
  ])('$name', ({ windows, warnings: expected }) => {
    expect(warnings(...windows)).toEqual(expected);
  });

  it(`refuses more than ${MAX_WINDOWS} windows in one environment, naming the key`, () => {
    const windows = Array.from({ length: MAX_WINDOWS + 1 }, (_, i) =>
      fixed(`0${Math.floor(i / 60) % 10}:${String(i % 60).padStart(2, '0')}`, '23:00'),
    );
    const result = load(...windows);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(formatProblems(result.problems).split('\n')).toEqual([
      `${M}: must list at most ${MAX_WINDOWS} windows (got ${MAX_WINDOWS + 1}): merge adjacent ones, or write a recurring one with schedule`,
    ]);
    expect(load(...windows.slice(1)).ok).toBe(true);
  });
});
