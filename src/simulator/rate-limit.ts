/**
 * Sliding-window rate limiting, per client key. A sliding log (the times of the requests accepted
 * within the window) rather than fixed windows, so a burst straddling a window boundary cannot
 * pass twice the limit, and a test that sends limit+1 requests quickly always sees the 429.
 */
export class SlidingWindowLimiter {
  private readonly accepted = new Map<string, number[]>();
  private lastSweep = 0;

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly now: () => number,
  ) {}

  /** Records a request for `key`; false when it is over the limit (and then not recorded). */
  tryAcquire(key: string): boolean {
    const now = this.now();
    this.sweep(now);
    const cutoff = now - this.windowMs;
    const times = (this.accepted.get(key) ?? []).filter((t) => t > cutoff);
    if (times.length >= this.limit) {
      this.accepted.set(key, times);
      return false;
    }
    times.push(now);
    this.accepted.set(key, times);
    return true;
  }

  /** Forgets every client. */
  reset(): void {
    this.accepted.clear();
  }

  // Drop idle clients now and then so the map does not grow with every address ever seen.
  private sweep(now: number): void {
    if (now - this.lastSweep < this.windowMs) return;
    this.lastSweep = now;
    const cutoff = now - this.windowMs;
    for (const [key, times] of this.accepted) {
      if (!times.some((t) => t > cutoff)) this.accepted.delete(key);
    }
  }
}
