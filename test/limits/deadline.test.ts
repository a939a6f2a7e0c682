/**
 * `deadline`: a run's signal that aborts at its deadline or with the outer signal, and whose timer
 * is gone once released (fake timers: no wall-clock time involved); and, in a real Node process,
 * that a released deadline does not wake the thread when it would have passed.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { deadline } from '../../src/limits/timers.js';
import { source, timerTrace } from '../support/timer-trace.js';

describe('deadline', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('aborts at its deadline with a TimeoutError, as AbortSignal.timeout does', () => {
    const { signal } = deadline(1_000);
    vi.advanceTimersByTime(999);
    expect(signal.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBeInstanceOf(DOMException);
    expect((signal.reason as DOMException).name).toBe('TimeoutError');
  });

  it('aborts with the outer signal and its reason, and then clears its timer', () => {
    const outer = new AbortController();
    const { signal } = deadline(1_000, outer.signal);
    const reason = new Error('shutting down');
    outer.abort(reason);
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe(reason);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('starts aborted when the outer signal already is', () => {
    const outer = new AbortController();
    outer.abort(new Error('gone'));
    const { signal } = deadline(1_000, outer.signal);
    expect(signal.aborted).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('once released, neither its timer nor the outer signal aborts it', () => {
    const outer = new AbortController();
    const run = deadline(1_000, outer.signal);
    run.release();
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(5_000);
    outer.abort(new Error('later'));
    expect(run.signal.aborted).toBe(false);
  });
});

describe('a released deadline in a real process', () => {
  /** The timer trace of a script that has `deadline` in scope. */
  const traceOf = (script: string): string =>
    timerTrace(
      `import { deadline } from ${source('../../src/limits/timers.ts', import.meta.url)};\n${script}`,
    );

  it('does not wake the thread when it would have passed', () => {
    // Released at once; a 600 ms timer keeps the process up past the deadline's 300 ms. Node's
    // trace names every timer list it processes ("timeout callback 300" would be the wake-up).
    const released = traceOf(
      'deadline(300).release(); deadline(300).release(); setTimeout(() => {}, 600);',
    );
    expect(released).toContain('timeout callback 600');
    expect(released).not.toContain('timeout callback 300');
  });

  it('is seen by the trace when it does fire (the check above can fail)', () => {
    const fired = traceOf('deadline(300); setTimeout(() => {}, 600);');
    expect(fired).toContain('timeout callback 300');
  });
});
