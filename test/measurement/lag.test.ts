import { afterEach, describe, expect, it, vi } from 'vitest';
import { startLagSampler } from '../../src/measurement/lag.js';

afterEach(() => {
  vi.useRealTimers();
});

/** A sampler on fake timers whose clock runs `late` ms behind each timer it fires. */
function fakeSampler(
  opts: { busyIntervalMs: number; reportEveryMs: number } = {
    busyIntervalMs: 50,
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
  it('arms no timer and reports nothing while no spell comes', () => {
    const { sampler, batches, pass } = fakeSampler();
    expect(vi.getTimerCount()).toBe(0);
    pass(3_600_000);
    expect(batches).toEqual([]);
    sampler.stop();
  });

  it('samples densely through a spell and sends the batch when the spell ends', () => {
    const { sampler, batches, pass } = fakeSampler();
    pass(1_000);
    const end = sampler.begin();
    // Four busy timers, each `late` ms behind.
    for (const late of [0, 12, 3, 0]) pass(50, late);
    expect(batches).toEqual([]);
    end();
    pass(50, 1); // the busy timer armed before the spell ended still fires, samples and reports
    expect(batches).toEqual([[0, 12, 3, 0, 1]]);
    expect(vi.getTimerCount()).toBe(0);
    pass(60_000);
    // The next begin starts a new spell.
    const next = sampler.begin();
    pass(50, 6);
    next();
    pass(50);
    sampler.stop();
    expect(batches).toEqual([
      [0, 12, 3, 0, 1],
      [6, 0],
    ]);
  });

  it('gives a spell shorter than the busy interval its sample', () => {
    const { sampler, batches, pass } = fakeSampler();
    const end = sampler.begin();
    pass(10);
    end();
    pass(40, 9);
    sampler.stop();
    expect(batches).toEqual([[9]]);
  });

  it('reports at most once per report interval while busy', () => {
    const { sampler, batches, pass } = fakeSampler({
      busyIntervalMs: 1_000,
      reportEveryMs: 5_000,
    });
    const end = sampler.begin();
    for (let i = 0; i < 12; i++) pass(1_000, i);
    end();
    pass(1_000, 20);
    sampler.stop();
    expect(batches).toEqual([
      [0, 1, 2, 3, 4],
      [5, 6, 7, 8, 9],
      [10, 11, 20],
    ]);
  });

  it('keeps one timer, counts overlapping spells, and ignores a second end of the same one', () => {
    const { sampler, batches, pass } = fakeSampler({
      busyIntervalMs: 50,
      reportEveryMs: 100_000,
    });
    const endA = sampler.begin();
    const endB = sampler.begin();
    expect(vi.getTimerCount()).toBe(1);
    pass(50);
    endA();
    endA();
    pass(50); // B is still in flight: still busy
    pass(50);
    expect(batches).toEqual([]);
    endB();
    pass(50); // the last busy sample, and the spell's batch
    expect(vi.getTimerCount()).toBe(0);
    expect(batches).toEqual([[0, 0, 0, 0]]);
    sampler.stop();
    // After stop a spell starting arms nothing.
    sampler.begin()();
    expect(vi.getTimerCount()).toBe(0);
  });
});
