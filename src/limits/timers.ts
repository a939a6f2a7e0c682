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

/**
 * Resolves at the instant `atMs` of the clock `now` (ms), to a fraction of a millisecond when the
 * thread is not starved: a timer until `TIMER_SLACK_MS` before it, then event-loop turns
 * (`setImmediate`) until the clock reaches it. With `Date.now`, which counts whole milliseconds,
 * that is the moment its count reaches `atMs`, not up to a millisecond after. The turns keep
 * polling I/O, so a response another request is waiting for is still read on time; they cost at
 * most that last stretch of CPU. Resolves at once for an instant that has passed.
 */
export async function waitUntil(
  atMs: number,
  now: () => number = Date.now,
  monotonic: () => number = () => performance.now(),
): Promise<void> {
  const left = atMs - now();
  // A wall clock stepped back meanwhile must not hold the wait (or spin) for the step: it ends a
  // millisecond after the instant on the monotonic clock in any case.
  const latest = monotonic() + left + 1;
  if (left - TIMER_SLACK_MS > 0) await delay(Math.floor(left - TIMER_SLACK_MS));
  while (now() < atMs && monotonic() < latest) {
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}
