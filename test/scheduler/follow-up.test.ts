/** The follow-up state machine on a plain number clock (no timers, no I/O). */
import { describe, expect, it } from 'vitest';
import { FollowUpSequence, nextFireAt } from '../../src/scheduler/follow-up.js';

const policy = { intervalMs: 10_000, windowMs: 180_000, successes: 3 };

describe('FollowUpSequence', () => {
  it('stays idle without a starting result: no tick runs anything', () => {
    const seq = new FollowUpSequence(policy);
    expect(seq.scheduled(0, false)).toBeNull();
    expect(seq.tick(10_000)).toBe('idle');
    expect(seq.isActive).toBe(false);
  });

  it('starts on a starting result and ends after `successes` good runs in a row', () => {
    const seq = new FollowUpSequence(policy);
    expect(seq.scheduled(0, true)).toBe('started');
    expect(seq.tick(10_000)).toBe('run');
    expect(seq.result(true)).toBeNull();
    expect(seq.tick(20_000)).toBe('run');
    // A bad one starts the count again.
    expect(seq.result(false)).toBeNull();
    for (const t of [30_000, 40_000]) {
      expect(seq.tick(t)).toBe('run');
      expect(seq.result(true)).toBeNull();
    }
    expect(seq.tick(50_000)).toBe('run');
    expect(seq.result(true)).toBe('recovered');
    expect(seq.isActive).toBe(false);
    expect(seq.tick(60_000)).toBe('idle');
  });

  it('ends when the window has passed since the last start; a new start restarts it', () => {
    const seq = new FollowUpSequence(policy);
    seq.scheduled(0, true);
    expect(seq.tick(170_000)).toBe('run');
    expect(seq.scheduled(175_000, true)).toBe('restarted');
    expect(seq.tick(180_000)).toBe('run');
    expect(seq.tick(354_999)).toBe('run');
    expect(seq.tick(355_000)).toBe('window_elapsed');
    expect(seq.tick(365_000)).toBe('idle');
  });

  it('a restart also restarts the count of good runs', () => {
    const seq = new FollowUpSequence({ ...policy, successes: 2 });
    seq.scheduled(0, true);
    seq.tick(10_000);
    expect(seq.result(true)).toBeNull();
    seq.scheduled(15_000, true);
    seq.tick(20_000);
    expect(seq.result(true)).toBeNull();
    seq.tick(30_000);
    expect(seq.result(true)).toBe('recovered');
  });

  it('ends as stopped only while active; late results after an end change nothing', () => {
    const seq = new FollowUpSequence(policy);
    expect(seq.stop()).toBeNull();
    seq.scheduled(0, true);
    expect(seq.stop()).toBe('stopped');
    expect(seq.result(true)).toBeNull();
    expect(seq.tick(10_000)).toBe('idle');
  });
});

describe('nextFireAt', () => {
  it('is the next k × interval + offset, on or after now', () => {
    expect(nextFireAt(0, 60_000, 17_000)).toBe(17_000);
    expect(nextFireAt(17_000, 60_000, 17_000)).toBe(17_000);
    expect(nextFireAt(17_001, 60_000, 17_000)).toBe(77_000);
    expect(nextFireAt(1_700_000_000_123, 10_000, 0)).toBe(1_700_000_010_000);
  });
});
