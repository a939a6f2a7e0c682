/**
 * Timers that cannot overflow. Node's timers hold a signed 32-bit millisecond count: a delay above
 * 2^31-1 ms (about 24.8 days) is replaced by 1 ms with a `TimeoutOverflowWarning`, so a huge
 * `Retry-After` once made a timer fire every millisecond. Every wait the monitor derives from
 * outside input goes through here and is split into pieces that fit.
 */
import { setTimeout as delay } from 'node:timers/promises';

/** The largest delay a Node timer accepts. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** Waits `ms` (any finite or infinite non-negative number); rejects when `signal` aborts. */
export async function safeDelay(ms: number, signal?: AbortSignal): Promise<void> {
  const end = performance.now() + Math.max(0, ms);
  for (let left = end - performance.now(); left > 0; left = end - performance.now()) {
    await delay(Math.min(Math.ceil(left), MAX_TIMER_MS), undefined, { signal });
  }
  signal?.throwIfAborted();
}

/**
 * Below this many ms before an instant, `waitUntil` stops trusting timers: a Node timer counts
 * whole milliseconds of a cached loop time and fires anywhere from just before to a millisecond or
 * more after the moment asked for.
 */
export const TIMER_SLACK_MS = 1.5;

/** The shortest sleep `waitUntil` takes in its last millisecond, ms: how late it may wake. */
export const SLEEP_SLICE_MS = 0.1;

/** What `Atomics.wait` sleeps on: a cell nothing ever changes or notifies. */
const sleepCell = new Int32Array(new SharedArrayBuffer(4));

/** How `waitUntil` reads time and knows whether answers are being read. */
export interface WaitClocks {
  /** The clock the instant is on, ms; default `Date.now`. */
  now?: () => number;
  /** A monotonic clock, ms, that bounds the wait if `now` stands still or steps back. */
  monotonic?: () => number;
  /** Whether another request's answer may arrive meanwhile; default true. */
  reading?: () => boolean;
}

/**
 * Resolves at the instant `atMs` of the clock `now` (ms), to a fraction of a millisecond when the
 * thread is not starved: a timer until `TIMER_SLACK_MS` before it, then short sleeps or
 * event-loop turns until the clock reaches it. With `Date.now`, which counts whole milliseconds,
 * that is the moment its count reaches `atMs`, not up to a millisecond after. Resolves at once
 * for an instant that has passed.
 *
 * While `reading()` is true (another request's answer may arrive), the last stretch is event-loop
 * turns (`setImmediate`), which keep polling I/O so that answer is read on time. Otherwise the
 * thread sleeps (`Atomics.wait`): through all but the last millisecond the clock can still be in,
 * then in slices of `SLEEP_SLICE_MS`. The turns spun the CPU for that whole stretch, a few tenths
 * of a millisecond per run on average (bench/LOG.md, "Where a steady run's CPU goes").
 */
export async function waitUntil(atMs: number, clocks: WaitClocks = {}): Promise<void> {
  const { now = Date.now, monotonic = () => performance.now(), reading = () => true } = clocks;
  const left = atMs - now();
  // A wall clock stepped back meanwhile must not hold the wait (or spin) for the step: it ends a
  // millisecond after the instant on the monotonic clock in any case.
  const latest = monotonic() + left + 1;
  if (left - TIMER_SLACK_MS > 0) await delay(Math.floor(left - TIMER_SLACK_MS));
  for (let t = now(); t < atMs && monotonic() < latest; t = now()) {
    if (reading()) await new Promise<void>((resolve) => setImmediate(resolve));
    // A clock of whole milliseconds reading t is somewhere in [t, t + 1): at least atMs - t - 1
    // is left, whatever the fraction.
    else Atomics.wait(sleepCell, 0, 0, Math.max(SLEEP_SLICE_MS, atMs - t - 1));
  }
}

/** A signal with a deadline, and the way to stand its timer down once the work is done. */
export interface Deadline {
  readonly signal: AbortSignal;
  /** Clears the timer and stops following the outer signal; the signal stays as it is. */
  release(): void;
}

/**
 * A signal that aborts `ms` from now (reason: a `TimeoutError` DOMException, as
 * `AbortSignal.timeout` gives) or when `outer` aborts (with its reason), whichever comes first.
 * Not `AbortSignal.timeout` and `AbortSignal.any`: their timer cannot be cleared, so it fires
 * after the work is long done and builds its DOMException, stack trace and all, for nobody. A
 * check run had two of them (its deadline and its cleanups'), about a fifth of a millisecond of
 * the measurement thread's CPU per run (bench/LOG.md, "CPU per run").
 */
export function deadline(ms: number, outer?: AbortSignal): Deadline {
  const controller = new AbortController();
  const onOuterAbort = (): void => {
    clearTimeout(timer);
    controller.abort(outer?.reason);
  };
  const timer = setTimeout(
    () => {
      outer?.removeEventListener('abort', onOuterAbort);
      controller.abort(
        new DOMException('The operation was aborted due to timeout', 'TimeoutError'),
      );
    },
    Math.min(Math.max(0, ms), MAX_TIMER_MS),
  );
  // Not unref'd, unlike `AbortSignal.timeout`'s: Node keeps the timer list of a cleared unref'd
  // timer (expecting another of that duration soon), so the thread would still wake when the
  // released deadline would have passed; at 60 s pings that was two wake-ups a run, 11 and 15 s
  // after it, some milliseconds of CPU each (bench/LOG.md, "Wake-ups for released
  // deadlines"). Every deadline is released when its work ends, so none holds a process open.
  if (outer?.aborted) onOuterAbort();
  else outer?.addEventListener('abort', onOuterAbort, { once: true });
  return {
    signal: controller.signal,
    release() {
      clearTimeout(timer);
      outer?.removeEventListener('abort', onOuterAbort);
    },
  };
}

/**
 * A promise that resolves when `signal` aborts, and the way to stop listening: a wait raced
 * against a long-lived signal must not leave its listener behind when the race ends otherwise.
 */
export function untilAborted(signal: AbortSignal): { promise: Promise<void>; release(): void } {
  let onAbort: () => void = () => {};
  const promise = new Promise<void>((resolve) => {
    onAbort = resolve;
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  return { promise, release: () => signal.removeEventListener('abort', onAbort) };
}
