import { setTimeout as delay } from 'node:timers/promises';

/**
 * The monitor's own traffic cap per environment (`request_budget_per_second`): a token bucket that
 * every request of every check, poll and cleanup takes a token from before it is sent. The bucket
 * holds a single token, so requests are paced at least 1/N s apart and no sliding second ever
 * sees more than N of them (a larger burst allowance would let two seconds' worth through in one).
 */
export class RequestBudget {
  private tokens: number;
  private last: number;
  private readonly capacity: number;
  /** Waiters are served in arrival order so a polling loop cannot starve a ping. */
  private queue: Promise<void> = Promise.resolve();
  private waiting = 0;

  constructor(
    private readonly perSecond: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.capacity = 1;
    this.tokens = this.capacity;
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
    return Math.max(0, ((this.waiting + 1 - this.tokens) / this.perSecond) * 1000);
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
      const waitMs = Math.ceil(((1 - this.tokens) / this.perSecond) * 1000);
      await delay(waitMs, undefined, { signal });
    }
  }

  private refill(): void {
    const now = this.now();
    this.tokens = Math.min(
      this.capacity,
      this.tokens + ((now - this.last) / 1000) * this.perSecond,
    );
    this.last = now;
  }
}
