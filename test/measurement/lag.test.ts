import { afterEach, describe, expect, it, vi } from 'vitest';
import { startLagSampler } from '../../src/measurement/lag.js';

afterEach(() => {
  vi.useRealTimers();
});

/** A sampler on fake timers whose clock runs `late` ms behind each timer it fires. */
function fakeSampler(
  opts: { busyIntervalMs: number; restIntervalMs: number; reportEveryMs: number } = {
    busyIntervalMs: 50,
    restIntervalMs: 15_000,
    reportEveryMs: 15_000,
  },
) {
  vi.useFakeTimers();
  let now = 0;
  const batches: number[][] = [];
  const sampler = startLagSampler({
    ...opts,
    report: (samples) => batches.push(samples),
    now: () => now,
  });
  /** Lets `ms` pass; the loop is `late` ms behind when the next timer fires. */
  const pass = (ms: number, late = 0): void => {
    now += ms + late;
    vi.advanceTimersByTime(ms);
  };
  return { sampler, batches, pass };
}

describe('startLagSampler', () => {
  it('samples at the rest interval while no run is in flight, one batch per sample', () => {
    const { sampler, batches, pass } = fakeSampler();
    pass(15_000, 2);
    pass(15_000, 0);
    pass(15_000, 7);
    sampler.stop();
    expect(batches).toEqual([[2], [0], [7]]);
  });

  it('samples densely while a run is in flight and falls back to rest after it', () => {
    const { sampler, batches, pass } = fakeSampler();
    pass(1_000); // into the rest interval: no sample yet
    const end = sampler.begin();
    // Four busy timers, each `late` ms behind.
    for (const late of [0, 12, 3, 0]) pass(50, late);
    end();
    pass(50, 1); // the busy timer armed before the run ended still fires and samples
    pass(14_000); // rest: nothing is due yet
    expect(batches).toEqual([]);
    pass(1_000, 4);
    sampler.stop();
    // No report while the run was in flight: 15 s had not passed since the start.
    expect(batches).toEqual([[0, 12, 3, 0, 1, 4]]);
  });

  it('gives a run shorter than the busy interval its sample', () => {
    const { sampler, batches, pass } = fakeSampler();
    const end = sampler.begin();
    pass(10);
    end();
    pass(40, 9);
    pass(15_000);
    sampler.stop();
    expect(batches).toEqual([[9, 0]]);
  });

  it('reports at most once per report interval while busy', () => {
    const { sampler, batches, pass } = fakeSampler({
      busyIntervalMs: 1_000,
      restIntervalMs: 60_000,
      reportEveryMs: 5_000,
    });
    const end = sampler.begin();
    for (let i = 0; i < 10; i++) pass(1_000, i);
    end();
    sampler.stop();
    expect(batches).toEqual([
      [0, 1, 2, 3, 4],
      [5, 6, 7, 8, 9],
    ]);
  });

  it('keeps one timer, counts overlapping runs, and ignores a second end of the same run', () => {
    const { sampler, batches, pass } = fakeSampler({
      busyIntervalMs: 50,
      restIntervalMs: 15_000,
      reportEveryMs: 100_000,
    });
    expect(vi.getTimerCount()).toBe(1);
    const endA = sampler.begin();
    const endB = sampler.begin();
    expect(vi.getTimerCount()).toBe(1);
    pass(50);
    endA();
    endA();
    pass(50); // B is still in flight: still busy
    pass(50);
    endB();
    pass(50); // the last busy sample; then rest
    pass(15_000);
    expect(vi.getTimerCount()).toBe(1);
    sampler.stop();
    expect(vi.getTimerCount()).toBe(0);
    expect(batches).toEqual([]);
    // After stop a run starting arms nothing.
    sampler.begin()();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('wakes its thread only at the rest interval when no run comes', () => {
    vi.useFakeTimers();
    const report = vi.fn();
    const sampler = startLagSampler({ report, now: () => Date.now() });
    vi.advanceTimersByTime(60_000);
    expect(report).toHaveBeenCalledTimes(4);
    sampler.stop();
  });
});
