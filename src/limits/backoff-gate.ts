/**
 * Honours the API's `Retry-After`: after a 429 (the spec always sends `Retry-After: 60`) or a 503
 * with `Retry-After`, nothing is sent to that environment until the time has passed.
 */
import { setTimeout as delay } from 'node:timers/promises';

/** The spec's value for 429 when a response somehow lacks the header. */
export const DEFAULT_RATE_LIMIT_BACKOFF_MS = 60_000;

export class BackoffGate {
  private until = 0;

  constructor(private readonly now: () => number = () => performance.now()) {}

  /** Closes the gate for `ms` from now (never shortens an existing closure). */
  closeFor(ms: number): void {
    this.until = Math.max(this.until, this.now() + ms);
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
      await delay(ms, undefined, { signal });
    }
    signal?.throwIfAborted();
  }

  /** Applies a response's status and `Retry-After` to the gate. */
  observe(statusCode: number | null, retryAfterMs: number | null): void {
    if (statusCode === 429) this.closeFor(retryAfterMs ?? DEFAULT_RATE_LIMIT_BACKOFF_MS);
    else if (statusCode === 503 && retryAfterMs !== null) this.closeFor(retryAfterMs);
  }
}
