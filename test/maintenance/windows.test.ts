/**
 * Whether a moment is inside a maintenance window, the window's end and the next one: recurring
 * windows (cron, with and without a time zone, across a DST change) and fixed ones.
 */
import { describe, expect, it } from 'vitest';
import { maintenanceState, type MaintenanceWindow } from '../../src/maintenance/windows.js';

const HOUR = 3_600_000;

function recurring(
  schedule: string,
  durationMs: number,
  timezone: string | null,
  reason = 'deploy',
): MaintenanceWindow {
  return { kind: 'recurring', schedule, durationMs, timezone, reason };
}

const utc = (iso: string) => Date.parse(iso);

describe('a fixed window', () => {
  const window: MaintenanceWindow = {
    kind: 'fixed',
    startMs: utc('2026-12-01T02:00:00Z'),
    endMs: utc('2026-12-01T03:30:00Z'),
    reason: 'database migration',
  };

  it('is next before its start, active from its start, over at its end', () => {
    const before = maintenanceState([window], utc('2026-12-01T01:59:59Z'));
    expect(before.active).toBeNull();
    expect(before.next).toEqual({
      startMs: window.startMs,
      endMs: window.endMs,
      reason: 'database migration',
    });
    expect(before.nextEdgeMs).toBe(window.startMs);
    const inside = maintenanceState([window], window.startMs);
    expect(inside.active?.endMs).toBe(window.endMs);
    expect(inside.nextEdgeMs).toBe(window.endMs);
    const after = maintenanceState([window], window.endMs);
    expect(after).toEqual({ active: null, next: null, nextEdgeMs: null });
  });

  it('is not seen further ahead than the lookahead', () => {
    expect(maintenanceState([window], window.startMs - 49 * HOUR).next).toBeNull();
  });
});

describe('a recurring window', () => {
  it('starts at every match and lasts its duration (UTC)', () => {
    const w = recurring('30 2 * * *', 2 * HOUR, 'UTC');
    expect(maintenanceState([w], utc('2026-12-01T02:29:00Z')).active).toBeNull();
    const inside = maintenanceState([w], utc('2026-12-01T04:29:59Z'));
    expect(inside.active).toEqual({
      startMs: utc('2026-12-01T02:30:00Z'),
      endMs: utc('2026-12-01T04:30:00Z'),
      reason: 'deploy',
    });
    const after = maintenanceState([w], utc('2026-12-01T04:30:00Z'));
    expect(after.active).toBeNull();
    expect(after.next?.startMs).toBe(utc('2026-12-02T02:30:00Z'));
    expect(after.nextEdgeMs).toBe(utc('2026-12-02T02:30:00Z'));
  });

  it('keeps its wall-clock start in its time zone across the March DST change', () => {
    // America/New_York springs forward on Sunday 2027-03-14 at 02:00 (UTC-5 → UTC-4).
    const w = recurring('0 1 * * *', HOUR, 'America/New_York', 'nightly');
    expect(maintenanceState([w], utc('2027-03-13T06:30:00Z')).active?.startMs).toBe(
      utc('2027-03-13T06:00:00Z'),
    );
    expect(maintenanceState([w], utc('2027-03-14T06:30:00Z')).active?.startMs).toBe(
      utc('2027-03-14T06:00:00Z'),
    );
    // From Monday 01:00 EDT is 05:00 UTC: the window moves an hour earlier in UTC.
    const monday = maintenanceState([w], utc('2027-03-15T05:30:00Z'));
    expect(monday.active?.startMs).toBe(utc('2027-03-15T05:00:00Z'));
    expect(maintenanceState([w], utc('2027-03-15T06:30:00Z')).active).toBeNull();
    expect(maintenanceState([w], utc('2027-03-14T07:00:00Z')).next?.startMs).toBe(
      utc('2027-03-15T05:00:00Z'),
    );
  });

  it('starts no window at a wall-clock time the DST change skips', () => {
    const w = recurring('30 2 * * *', HOUR, 'America/New_York');
    // 02:30 does not exist on 2027-03-14; the next start is Monday 02:30 EDT.
    const state = maintenanceState([w], utc('2027-03-13T08:00:00Z'));
    expect(state.next?.startMs).toBe(utc('2027-03-15T06:30:00Z'));
  });

  it('starts twice at a wall-clock time the November DST change repeats', () => {
    // America/New_York falls back on 2026-11-01 at 02:00 EDT: 01:30 happens at 05:30 and 06:30 UTC.
    const w = recurring('30 1 * * *', 15 * 60_000, 'America/New_York');
    const first = maintenanceState([w], utc('2026-11-01T05:00:00Z'));
    expect(first.next?.startMs).toBe(utc('2026-11-01T05:30:00Z'));
    expect(maintenanceState([w], first.next?.endMs ?? 0).next?.startMs).toBe(
      utc('2026-11-01T06:30:00Z'),
    );
  });

  it('reads day-of-week in its time zone', () => {
    // Sunday 23:00 in Los Angeles is Monday 07:00 UTC.
    const w = recurring('0 23 * * SUN', HOUR, 'America/Los_Angeles');
    expect(maintenanceState([w], utc('2026-11-30T07:30:00Z')).active?.startMs).toBe(
      utc('2026-11-30T07:00:00Z'),
    );
  });

  it('merges with a window it overlaps: the first reason, the last end', () => {
    const w = recurring('0 2 * * *', 2 * HOUR, 'UTC', 'nightly');
    const fixed: MaintenanceWindow = {
      kind: 'fixed',
      startMs: utc('2026-12-01T03:00:00Z'),
      endMs: utc('2026-12-01T05:00:00Z'),
      reason: 'migration',
    };
    const state = maintenanceState([w, fixed], utc('2026-12-01T02:10:00Z'));
    expect(state.active).toEqual({
      startMs: utc('2026-12-01T02:00:00Z'),
      endMs: utc('2026-12-01T05:00:00Z'),
      reason: 'nightly',
    });
  });

  it('reads L as the last day of the month', () => {
    const w = recurring('0 2 L * *', HOUR, 'UTC');
    expect(maintenanceState([w], utc('2027-02-20T00:00:00Z'), 10 * 24 * HOUR).next?.startMs).toBe(
      utc('2027-02-28T02:00:00Z'),
    );
  });

  it('needs both the day of the month and the day of the week to match', () => {
    // The first of a month that is a Monday: 2027-02-01, not every Monday nor every first.
    const w = recurring('0 2 1 * MON', HOUR, 'UTC');
    const state = maintenanceState([w], utc('2026-12-31T00:00:00Z'), 40 * 24 * HOUR);
    expect(state.next?.startMs).toBe(utc('2027-02-01T02:00:00Z'));
  });

  it('uses the process time zone without one', () => {
    const w = recurring('0 2 * * *', HOUR, null);
    const start = new Date(2026, 11, 1, 2, 0).getTime();
    expect(maintenanceState([w], start + 60_000).active?.startMs).toBe(start);
  });
});
