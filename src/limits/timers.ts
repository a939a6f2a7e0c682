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
