/**
 * Honours the API's `Retry-After`: after a 429 (the spec always sends `Retry-After: 60`) or a 503
 * with `Retry-After`, nothing is sent to that environment until the time has passed.
 *
 * What each shape of the header means (parsed in `api/response.ts`, applied here):
 * - delta-seconds (`60`, also fractional `1.5`): that long from now;
 * - an HTTP-date: until then; a date in the past means now;
 * - absent on a 429, or present but unparsable or negative on a 429 or 503: the spec's 60 s;
 * - anything longer than `MAX_RETRY_AFTER_MS` (1 hour) is clamped to it, and the clamp is
 *   reported through `onClamp` so it shows in the log. A closure can therefore never outgrow a
 *   Node timer (see `timers.ts`), and one absurd header cannot silence the monitor for days.
 */
import { SPEC_RETRY_AFTER_MS } from '../api/response.js';
import { safeDelay } from './timers.js';

/** The spec's value for 429 when a response somehow lacks the header. */
export const DEFAULT_RATE_LIMIT_BACKOFF_MS = SPEC_RETRY_AFTER_MS;
/** The longest closure any single `Retry-After` can cause. */
export const MAX_RETRY_AFTER_MS = 60 * 60_000;

export interface BackoffGateOptions {
  now?: () => number;
  /** Called when a `Retry-After` longer than the maximum was clamped. */
  onClamp?: (requestedMs: number, appliedMs: number) => void;
}

export class BackoffGate {
  private until = 0;
  private readonly now: () => number;
  private readonly onClamp: (requestedMs: number, appliedMs: number) => void;

  constructor(opts: BackoffGateOptions | (() => number) = {}) {
    const o = typeof opts === 'function' ? { now: opts } : opts;
    this.now = o.now ?? (() => performance.now());
    this.onClamp = o.onClamp ?? (() => {});
  }

  /** Closes the gate for `ms` from now (never shortens an existing closure; clamps to 1 hour). */
  closeFor(ms: number): void {
    let applied = Number.isNaN(ms) ? DEFAULT_RATE_LIMIT_BACKOFF_MS : Math.max(0, ms);
    if (applied > MAX_RETRY_AFTER_MS) {
      this.onClamp(ms, MAX_RETRY_AFTER_MS);
      applied = MAX_RETRY_AFTER_MS;
    }
    this.until = Math.max(this.until, this.now() + applied);
  }

  /** Milliseconds until requests may be sent again (0 when open). */
  remainingMs(): number {
    return Math.max(0, this.until - this.now());
  }

  isOpen(): boolean {
    return this.remainingMs() === 0;
  }

  /** Waits until the gate is open; rejects when `signal` aborts. */
  async waitOpen(signal?: AbortSignal): Promise<void> {
    for (let ms = this.remainingMs(); ms > 0; ms = this.remainingMs()) {
      await safeDelay(ms, signal);
    }
    signal?.throwIfAborted();
  }

  /** Applies a response's status and `Retry-After` to the gate, whichever path received it. */
  observe(statusCode: number | null, retryAfterMs: number | null): void {
    if (statusCode === 429) this.closeFor(retryAfterMs ?? DEFAULT_RATE_LIMIT_BACKOFF_MS);
    else if (statusCode === 503 && retryAfterMs !== null) this.closeFor(retryAfterMs);
  }
}
