/**
 * The one way a request is admitted: the environment's Retry-After gate, then a token from its
 * request budget, then the gate again. The second look matters: a request can wait in the
 * budget's queue while another path (a ping, a cleanup close) receives a 429, and it must not be
 * sent inside the new Retry-After just because it passed the gate before the wait.
 */
import type { BackoffGate } from './backoff-gate.js';
import type { BudgetPriority, RequestBudget } from './request-budget.js';

/** Thrown when the gate stays closed for longer than the caller can wait. */
export class RetryAfterError extends Error {
  readonly code = 'RETRY_AFTER';
  constructor(readonly retryAfterMs: number) {
    super(`the API asked to wait ${Math.ceil(retryAfterMs / 1000)} s (Retry-After)`);
    this.name = 'RetryAfterError';
  }
}

/**
 * Thrown when a request's budget token cannot come before its run's deadline: the monitor's own
 * pacing (`request_budget_per_second`) left the run no time, not the API. Runs end with the
 * reason `budget` (docs/configuration.md, "Request budget").
 */
export class BudgetWaitError extends Error {
  readonly code = 'BUDGET_WAIT';
  constructor(
    readonly estimateMs: number,
    readonly maxWaitMs: number,
    options?: ErrorOptions,
  ) {
    super(
      `the request budget has no token for ${Math.ceil(estimateMs)} ms, and the run has ${Math.floor(maxWaitMs)} ms left`,
      options,
    );
    this.name = 'BudgetWaitError';
  }
}

export interface AdmitOptions {
  signal?: AbortSignal;
  /**
   * The longest the caller may wait for the gate. When the gate is closed for longer, the call
   * fails at once with `RetryAfterError` instead of waiting for a deadline it cannot meet.
   */
  maxWaitMs?: number;
  /** Who the request is for (see `BudgetPriority`); default `normal`. */
  priority?: BudgetPriority;
  /**
   * Told how long each wait for a budget token took (ms), also when it ended in an abort. That
   * wait is the monitor's own pacing, not the API's time: the runner keeps it out of run
   * durations and reports it on its own. A wait for the gate is the API's doing (its Retry-After)
   * and is not reported here.
   */
  onBudgetWait?: (ms: number) => void;

  /** Monotonic clock in ms, for `onBudgetWait`. */
  now?: () => number;
}

/** Waits for the gate and a budget token; resolves when the request may be sent right now. */
export async function admit(
  gate: BackoffGate,
  budget: RequestBudget,
  opts: AdmitOptions = {},
): Promise<void> {
  const now = opts.now ?? (() => performance.now());
  for (;;) {
    const closed = gate.remainingMs();
    if (opts.maxWaitMs !== undefined && closed > opts.maxWaitMs) throw new RetryAfterError(closed);
    await gate.waitOpen(opts.signal);
    const asked = now();
    try {
      await budget.acquire(opts.signal, opts.priority);
    } catch (err) {
      // A deadline (a TimeoutError reason) that came during the wait for a token: the budget's
      // doing, told apart from a shutdown's abort.
      const reason: unknown = opts.signal?.reason;
      if (reason instanceof DOMException && reason.name === 'TimeoutError') {
        throw new BudgetWaitError(now() - asked, opts.maxWaitMs ?? Infinity, { cause: err });
      }
      throw err;
    } finally {
      opts.onBudgetWait?.(now() - asked);
    }
    // The token is spent either way; a request never goes out inside a Retry-After.
    if (gate.isOpen()) return;
  }
}
