import { clearTimeout as clearRealTimeout, setTimeout as setRealTimeout } from 'node:timers';
import type { BudgetPriority } from '../kernel/check.js';

export type { BudgetPriority } from '../kernel/check.js';

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
 * How long a reservation holds after its time when no `first` request has come to use it (the
 * ping was skipped, or fired late on a busy machine): `normal` requests wait at most this long
 * past the reserved moment.
 */
export const RESERVATION_GRACE_MS = 1_000;

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
 * every request of every check, poll and cleanup takes a token from before it is sent. The bucket
 * holds a single token, so requests are paced at least 1/(N × 1.01) s apart, never burst, and in
 * any T seconds at most 1 + 1.01 × N × T go out.
 *
 * Pings come first without a larger burst: the scheduler reserves the moment each ping is due
 * (`reserve`), and a `normal` request takes the token only if the bucket is full again by the next
 * reserved moment; otherwise it waits until that ping has taken its token (or the reservation
 * lapsed). A `first` request that still has to wait is served before every queued `normal` one.
 */
export class RequestBudget {
  /** Tokens in the bucket, 0 … 1. */
  private tokens: number;
  private last: number;
  /** Tokens per millisecond. */
  private refillPerMs: number;
  /** Waiters in arrival order per priority, so a polling loop cannot starve a ping. */
  private readonly queues: Record<BudgetPriority, Waiter[]> = { first: [], normal: [] };
  private timer: unknown;
  /** Moments (this budget's clock, ms, ascending) at which a `first` request is due. */
  private readonly reservations: number[] = [];

  constructor(
    perSecond: number,
    private readonly now: () => number = () => performance.now(),
    private readonly timers: BudgetTimers = REAL_TIMERS,
  ) {
    this.refillPerMs = (perSecond * (1 + REFILL_HEADROOM)) / 1000;
    this.tokens = 1;
    this.last = now();
  }

  /** Tokens in the bucket right now (fractional, 0 … 1). */
  available(): number {
    this.refill();
    return this.tokens;
  }

  /**
   * Keeps the budget clear for a `first` request due in `inMs` ms: from 1/(1.01 N) s before that
   * moment, `normal` requests wait until a `first` request has taken its token (or the moment is
   * `RESERVATION_GRACE_MS` past), so the ping finds the token there.
   */
  reserve(inMs: number): void {
    const at = this.now() + Math.max(0, inMs);
    const index = this.reservations.findIndex((r) => r > at);
    if (index < 0) this.reservations.push(at);
    else this.reservations.splice(index, 0, at);
    this.serve();
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
    const forTokens = (extra: number) =>
      Math.max(0, (ahead + extra + 1 - this.tokens) / this.refillPerMs);
    if (priority === 'first') return forTokens(0);
    // Each ping due before the token would be there takes a token first (an estimate: it
    // assumes the reserved pings come).
    this.dropLapsed();
    const now = this.now();
    let reserved = 0;
    while (
      reserved < this.reservations.length &&
      this.reservations[reserved]! - now < forTokens(reserved) + this.refillIntervalMs()
    ) {
      reserved += 1;
    }
    return forTokens(reserved);
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
   * Changes the rate (a configuration reload): what the bucket holds, the reservations and the
   * queued requests stay, so the cap holds across the change with no burst (docs/configuration.md,
   * "Reload").
   */
  setRate(perSecond: number): void {
    this.refill();
    this.refillPerMs = (perSecond * (1 + REFILL_HEADROOM)) / 1000;
    this.serve();
  }

  /**
   * Hands out what the bucket holds, `first` waiters before `normal` ones, each in arrival order,
   * and arms one timer for the moment the next waiter can be served.
   */
  private serve(): void {
    if (this.timer !== undefined) this.timers.clear(this.timer);
    this.timer = undefined;
    this.refill();
    const first = this.queues.first;
    while (first.length > 0 && this.tokens >= 1 - ROUNDING) {
      this.take(first.shift()!);
      this.useReservation();
    }
    const normal = this.queues.normal;
    while (
      first.length === 0 &&
      normal.length > 0 &&
      this.tokens >= 1 - ROUNDING &&
      this.heldUntil() <= this.now()
    ) {
      this.take(normal.shift()!);
    }
    const next = first.length > 0 ? 'first' : 'normal';
    if (this.queues[next].length === 0) return;
    let waitMs = (1 - this.tokens) / this.refillPerMs;
    if (next === 'normal') waitMs = Math.max(waitMs, this.heldUntil() - this.now());
    // Timers have whole-millisecond resolution and never fire early, so wait the whole
    // milliseconds that cover the deficit; the token is taken as soon as it is there.
    this.timer = this.timers.set(() => this.serve(), Math.max(1, Math.ceil(waitMs)));
  }

  private take(waiter: Waiter): void {
    this.tokens = Math.max(0, this.tokens - 1);
    waiter.signal?.removeEventListener('abort', waiter.onAbort);
    waiter.resolve();
  }

  /** A `first` request took a token: the reservation it was due at, if any, is used up. */
  private useReservation(): void {
    this.dropLapsed();
    const next = this.reservations[0];
    if (next !== undefined && next - this.now() < this.refillIntervalMs()) {
      this.reservations.shift();
    }
  }

  /**
   * Until when (this budget's clock) a `normal` request must wait for the next reservation: taking
   * the token now must leave the bucket full again by the reserved moment, which takes one refill
   * interval; inside that interval it waits until the reservation is used or lapses.
   */
  private heldUntil(): number {
    this.dropLapsed();
    const next = this.reservations[0];
    if (next === undefined || next - this.now() >= this.refillIntervalMs()) return -Infinity;
    return next + RESERVATION_GRACE_MS;
  }

  private dropLapsed(): void {
    const now = this.now();
    while (this.reservations.length > 0 && this.reservations[0]! + RESERVATION_GRACE_MS <= now) {
      this.reservations.shift();
    }
  }

  /** Time for one whole token to refill, ms. */
  private refillIntervalMs(): number {
    return 1 / this.refillPerMs;
  }

  private refill(): void {
    const now = this.now();
    this.tokens = Math.min(1, this.tokens + Math.max(0, now - this.last) * this.refillPerMs);
    this.last = now;
  }
}
