import { clearTimeout as clearRealTimeout, setTimeout as setRealTimeout } from 'node:timers';

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
 * Who a request is for. `first`: a run whose timing is its measurement (a ping, a confirmation
 * ping), served before every queued `normal` request and allowed the reserved token. `normal`:
 * everything else (lifecycle steps and polls, the other checks, closing leftovers).
 */
export type BudgetPriority = 'first' | 'normal';

/**
 * Tokens kept for `first` requests. Without it a ping that comes due just after a lifecycle poll
 * took the token waits for the refill: up to 1/N s (a second at the default N = 1), measured in
 * its fire time. With it the ping goes out at once and the lifecycle's next request waits instead.
 */
export const RESERVED_TOKENS = 1;

/**
 * Tokens that floating-point refill arithmetic may lose: a waiter whose deficit was waited out
 * exactly must not wait again for a billionth of a token.
 */
const ROUNDING = 1e-9;

/** The timer a budget waits on; it must run on the same clock as the budget's `now`. */
export interface BudgetTimers {
  set(fn: () => void, ms: number): unknown;
  clear(timer: unknown): void;
}

/**
 * Node's own timers, for the default monotonic clock. Taken from `node:timers`, not the globals, so
 * that a test that fakes the global timers (and not `performance.now()`) does not stop the budget:
 * its waits and its clock stay on real time together.
 */
const REAL_TIMERS: BudgetTimers = {
  set: (fn, ms) => setRealTimeout(fn, ms),
  clear: (timer) => clearRealTimeout(timer as NodeJS.Timeout),
};

interface Waiter {
  resolve: () => void;
  reject: (reason: unknown) => void;
  signal: AbortSignal | undefined;
  onAbort: () => void;
}

/**
 * The monitor's own traffic cap per environment (`request_budget_per_second`): a token bucket that
 * every request of every check, poll and cleanup takes a token from before it is sent. `normal`
 * requests see a bucket of one token, so they are paced at least 1/(N × 1.01) s apart and never
 * burst. One more token is reserved for `first` requests, so a ping never waits for a lifecycle's
 * token: at most two requests go out together, and then the second is a `first` one. In any T
 * seconds at most 2 + 1.01 × N × T requests are sent.
 */
export class RequestBudget {
  /** Tokens in the bucket, 0 … 1 + RESERVED_TOKENS; `normal` requests use only those above the reserve. */
  private tokens: number;
  private last: number;
  /** Tokens per millisecond. */
  private readonly refillPerMs: number;
  /** Waiters in arrival order per priority, so a polling loop cannot starve a ping. */
  private readonly queues: Record<BudgetPriority, Waiter[]> = { first: [], normal: [] };
  private timer: unknown;

  constructor(
    perSecond: number,
    private readonly now: () => number = () => performance.now(),
    private readonly timers: BudgetTimers = REAL_TIMERS,
  ) {
    this.refillPerMs = (perSecond * (1 + REFILL_HEADROOM)) / 1000;
    this.tokens = 1 + RESERVED_TOKENS;
    this.last = now();
  }

  /** Tokens a `normal` request could take right now (fractional, 0 … 1). */
  available(): number {
    this.refill();
    return Math.max(0, this.tokens - RESERVED_TOKENS);
  }

  /**
   * How long a request of `priority` asked for now would wait for its token, behind the waiters
   * served before it (every queued `first` one; for `normal`, every queued one).
   */
  waitEstimateMs(priority: BudgetPriority = 'normal'): number {
    this.refill();
    const ahead =
      priority === 'first'
        ? this.queues.first.length
        : this.queues.first.length + this.queues.normal.length;
    return Math.max(0, (ahead + need(priority) - this.tokens) / this.refillPerMs);
  }

  /** Waits until a token is available and takes it; rejects when `signal` aborts. */
  acquire(signal?: AbortSignal, priority: BudgetPriority = 'normal'): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<void>((resolve, reject) => {
      const queue = this.queues[priority];
      const waiter: Waiter = {
        resolve,
        reject,
        signal,
        onAbort: () => {
          const at = queue.indexOf(waiter);
          if (at >= 0) queue.splice(at, 1);
          reject(signal?.reason);
          // The waiters behind it may be served sooner now.
          this.serve();
        },
      };
      signal?.addEventListener('abort', waiter.onAbort, { once: true });
      queue.push(waiter);
      this.serve();
    });
  }

  /**
   * Hands out what the bucket holds, `first` waiters before `normal` ones, each in arrival order,
   * and arms one timer for the moment the next waiter can be served.
   */
  private serve(): void {
    if (this.timer !== undefined) this.timers.clear(this.timer);
    this.timer = undefined;
    this.refill();
    for (const priority of ['first', 'normal'] as const) {
      const queue = this.queues[priority];
      while (queue.length > 0 && this.tokens >= need(priority) - ROUNDING) {
        this.tokens = Math.max(0, this.tokens - 1);
        const waiter = queue.shift()!;
        waiter.signal?.removeEventListener('abort', waiter.onAbort);
        waiter.resolve();
      }
    }
    // A `normal` waiter is never served while a `first` one waits: the first queue is empty here
    // unless the bucket is below one token, and then a `normal` waiter could not be served anyway.
    const next = this.queues.first.length > 0 ? 'first' : 'normal';
    if (this.queues[next].length === 0) return;
    const deficitMs = (need(next) - this.tokens) / this.refillPerMs;
    // Timers have whole-millisecond resolution and never fire early, so wait the whole
    // milliseconds that cover the deficit; the token is taken as soon as it is there.
    this.timer = this.timers.set(() => this.serve(), Math.max(1, Math.ceil(deficitMs)));
  }

  private refill(): void {
    const now = this.now();
    this.tokens = Math.min(
      1 + RESERVED_TOKENS,
      this.tokens + Math.max(0, now - this.last) * this.refillPerMs,
    );
    this.last = now;
  }
}

/** Tokens the bucket must hold before a request of `priority` may take one. */
function need(priority: BudgetPriority): number {
  return priority === 'first' ? 1 : 1 + RESERVED_TOKENS;
}
