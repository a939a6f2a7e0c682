import { afterEach, describe, expect, it, vi } from 'vitest';
import { startLagSampler } from '../../src/measurement/lag.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('startLagSampler', () => {
  it('samples once a second how late its timer fired, and reports in batches', () => {
    vi.useFakeTimers();
    let now = 0;
    const batches: number[][] = [];
    const sampler = startLagSampler({
      intervalMs: 1_000,
      reportEveryMs: 5_000,
      report: (samples) => batches.push(samples),
      now: () => now,
    });
    // Each second the loop is `late` ms behind: the fake clock advances by that much extra.
    const lateness = [0, 3, 0, 40, 1, 0, 0, 2, 0, 0];
    for (const late of lateness) {
      now += 1_000 + late;
      vi.advanceTimersByTime(1_000);
    }
    sampler.stop();
    expect(batches).toEqual([
      [0, 3, 0, 40, 1],
      [0, 0, 2, 0, 0],
    ]);
  });

  it('wakes its thread once per interval and stops cleanly', () => {
    vi.useFakeTimers();
    const sampler = startLagSampler({ report: () => {} });
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(10_000);
    expect(vi.getTimerCount()).toBe(1);
    sampler.stop();
    expect(vi.getTimerCount()).toBe(0);
  });
});
