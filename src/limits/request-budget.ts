import { setTimeout as delay } from 'node:timers/promises';

/**
 * Headroom of the refill over the configured rate. A schedule may use the whole budget (1 s pings
 * with `request_budget_per_second: 1` is valid), and then any lateness, once waited for, could
 * never be caught up at exactly N per second: every timer overshoot would stay, and the fire time
 * would drift later run after run (+60 ms a minute was measured). Refilling 1% faster lets a late
 * request's successors catch up by 10 ms per second at 1/s, while the long-run rate stays within
 * 1% of N. Documented in docs/configuration.md (`request_budget_per_second`).
 */
export const REFILL_HEADROOM = 0.01;

/**
 * The monitor's own traffic cap per environment (`request_budget_per_second`): a token bucket that
 * every request of every check, poll and cleanup takes a token from before it is sent. The bucket
 * holds a single token, so requests are paced at least 1/(N × 1.01) s apart and no burst goes
 * beyond one request (a larger burst allowance would let two seconds' worth through in one).
 */
export class RequestBudget {
  private tokens: number;
  private last: number;
  /** Tokens per millisecond. */
  private readonly refillPerMs: number;
  /** Waiters are served in arrival order so a polling loop cannot starve a ping. */
  private queue: Promise<void> = Promise.resolve();
  private waiting = 0;

  constructor(
    perSecond: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.refillPerMs = (perSecond * (1 + REFILL_HEADROOM)) / 1000;
    this.tokens = 1;
    this.last = now();
  }

  /** Tokens available right now (fractional). */
  available(): number {
    this.refill();
    return this.tokens;
  }

  /** How long a request asked for now would wait for its token, behind the queued ones. */
  waitEstimateMs(): number {
    this.refill();
    return Math.max(0, (this.waiting + 1 - this.tokens) / this.refillPerMs);
  }

  /** Waits until a token is available and takes it; rejects when `signal` aborts. */
  acquire(signal?: AbortSignal): Promise<void> {
    this.waiting += 1;
    const turn = this.queue
      .then(() => this.take(signal))
      .finally(() => {
        this.waiting -= 1;
      });
    // The next waiter queues behind this one whether it succeeds or aborts.
    this.queue = turn.catch(() => undefined);
    return turn;
  }

  private async take(signal?: AbortSignal): Promise<void> {
    for (;;) {
      signal?.throwIfAborted();
      this.refill();
      if (this.tokens >= 1) {
        this.tokens -= 1;
        return;
      }
      // Timers have whole-millisecond resolution and never fire early, so wait the whole
      // milliseconds that cover the deficit; the loop takes the token as soon as it is there.
      await delay(Math.max(1, Math.ceil(this.deficitMs())), undefined, { signal });
    }
  }

  /** Milliseconds until the bucket holds a whole token again. */
  private deficitMs(): number {
    return (1 - this.tokens) / this.refillPerMs;
  }

  private refill(): void {
    const now = this.now();
    this.tokens = Math.min(1, this.tokens + (now - this.last) * this.refillPerMs);
    this.last = now;
  }
}
