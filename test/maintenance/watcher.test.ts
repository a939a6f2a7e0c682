/**
 * The daemon's maintenance watcher on a fake clock: the gauge's value at start, a change at each
 * window edge from one timer (no polling), and the status of an active or upcoming window.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { MaintenanceWatcher } from '../../src/maintenance/watcher.js';
import type { MaintenanceWindow } from '../../src/maintenance/windows.js';

const T0 = Date.parse('2026-12-01T00:00:00Z');
const HOUR = 3_600_000;

const fixed = (fromH: number, toH: number, reason: string): MaintenanceWindow => ({
  kind: 'fixed',
  startMs: T0 + fromH * HOUR,
  endMs: T0 + toH * HOUR,
  reason,
});

describe('MaintenanceWatcher', () => {
  let watcher: MaintenanceWatcher | undefined;
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(T0);
  });
  afterEach(() => {
    watcher?.stop();
    vi.useRealTimers();
  });

  it('reports every environment at start and each edge once, with one pending timer', () => {
    const changes: string[] = [];
    watcher = new MaintenanceWatcher({
      environments: [
        { name: 'production', maintenance: [fixed(2, 3, 'migration')] },
        { name: 'sandbox' },
      ],
      onChange: (environment, active) =>
        changes.push(`${new Date(Date.now()).toISOString()} ${environment} ${active}`),
    });
    expect(changes).toEqual([
      '2026-12-01T00:00:00.000Z production false',
      '2026-12-01T00:00:00.000Z sandbox false',
    ]);
    // One timer, for production's next edge; sandbox has none.
    expect(vi.getTimerCount()).toBe(1);
    expect(watcher.status('production')).toMatchObject({ state: 'upcoming', reason: 'migration' });
    vi.advanceTimersByTime(2 * HOUR - 1);
    expect(changes).toHaveLength(2);
    vi.advanceTimersByTime(1);
    expect(changes.at(-1)).toBe('2026-12-01T02:00:00.000Z production true');
    expect(watcher.isActive('production')).toBe(true);
    expect(watcher.status('production')).toEqual({
      state: 'active',
      reason: 'migration',
      start: '2026-12-01T02:00:00.000Z',
      end: '2026-12-01T03:00:00.000Z',
    });
    vi.advanceTimersByTime(HOUR);
    expect(changes.at(-1)).toBe('2026-12-01T03:00:00.000Z production false');
    expect(watcher.status('production')).toBeNull();
    expect(watcher.status('sandbox')).toBeNull();
    expect(changes).toHaveLength(4);
  });

  it('announces a window only within 24 hours, and finds it by waking at most daily', () => {
    const changes: boolean[] = [];
    watcher = new MaintenanceWatcher({
      environments: [{ name: 'production', maintenance: [fixed(60, 61, 'far ahead')] }],
      onChange: (_e, active) => changes.push(active),
    });
    expect(watcher.status('production')).toBeNull();
    vi.advanceTimersByTime(37 * HOUR);
    expect(watcher.status('production')).toMatchObject({ state: 'upcoming' });
    vi.advanceTimersByTime(23 * HOUR);
    expect(changes).toEqual([false, true]);
  });

  it('stops its timers', () => {
    watcher = new MaintenanceWatcher({
      environments: [{ name: 'production', maintenance: [fixed(1, 2, 'x')] }],
      onChange: () => {},
    });
    watcher.stop();
    expect(vi.getTimerCount()).toBe(0);
  });
});
