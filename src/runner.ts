/**
 * Runs one check once: gives it a context, times it on the monotonic clock, enforces its deadline,
 * runs its cleanups (with a fresh deadline, also after failures and aborts) and assembles the
 * Result. The framework, not the check, owns timing and error capture.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { callsInFlight, type ApiClient, type ApiResponse } from './api/client.js';
import type {
  AnyCheck,
  CheckContext,
  CheckLogger,
  CheckOutcome,
  CheckResult,
  SessionTracker,
  StepRecord,
} from './kernel/check.js';
import { withFields } from './kernel/logger.js';
import type { EnvironmentConfig } from './config/index.js';
import { checkEnvironmentOf, sectionOf } from './config/section.js';
import type { BackoffGate } from './limits/backoff-gate.js';
import type { RequestBudget } from './limits/request-budget.js';
import { admit, BudgetWaitError, RetryAfterError } from './limits/admission.js';
import { deadline, untilAborted, waitUntil } from './limits/timers.js';
import type { CreatedSessions } from './sessions/journal.js';

export interface RunOptions {
  check: AnyCheck;
  environment: EnvironmentConfig;
  client: ApiClient;
  budget: RequestBudget;
  gate: BackoffGate;
  sessions: SessionTracker;
  createdSessions: CreatedSessions;
  /** What checks keep between runs in this environment, by check name (see `retained`). */
  retained: Map<string, object>;
  log: CheckLogger;
  runNumber: number;
  /** Deadline for the whole run; cleanups get `cleanupTimeoutMs` on top. */
  timeoutMs: number;
  cleanupTimeoutMs?: number;
  /** Aborts the run from outside (shutdown); its cleanups still run, under their own deadline. */
  signal?: AbortSignal;
  /**
   * Abandons the run (the scheduler's watchdog: it stayed in flight past its deadline and its
   * cleanups' bound). Aborts the run and its cleanups, and hands every session token the run
   * still holds to the reaper at once: the sessions stay in the ledger and the reaper closes
   * them (docs/architecture.md, "No environment goes silent").
   */
  abandon?: AbortSignal;
  /**
   * The instant the schedule named for this run (wall clock, ms). The scheduler starts a run a
   * little before it, so that setting up the run costs no lateness; the run's first admission
   * then waits until this instant, and the run is timed from it (`startedAt`, `durationMs`, its
   * deadline). Absent: the run starts now.
   */
  startAt?: number;
  /** Monotonic clock in ms. */
  now?: () => number;
  /** Wall clock in ms, for `startedAt`. */
  wallNow?: () => number;
}

/** Runs `opts.check` once and returns its Result. Never throws. */
export async function runCheck(opts: RunOptions): Promise<CheckResult> {
  const now = opts.now ?? (() => performance.now());
  const wallClock = opts.wallNow ?? Date.now;
  const setUpAt = wallClock();
  // A run set up ahead of its instant starts at it; one set up late starts now.
  const early = opts.startAt === undefined ? 0 : Math.max(0, opts.startAt - setUpAt);
  const startedAt = setUpAt + early;
  // Re-taken when the wait for the instant ends (below).
  let start = now() + early;
  let startPending = early > 0;
  const correlationId = randomUUID();
  const steps: StepRecord[] = [];
  const responses: CheckResult['responses'] = [];
  const contractChecks: CheckResult['contractChecks'] = [];
  const cleanups: Array<() => Promise<void>> = [];

  // The tokens this run holds away from the reaper: handed back when the run ends or is
  // abandoned, whatever its cleanups managed, so that no token is held for ever.
  const held = new Set<string>();
  const sessions: SessionTracker = {
    async create(body, options, admitCreate) {
      const created = await opts.sessions.create(body, options, admitCreate);
      for (const token of created.tokens) held.add(token);
      return created;
    },
    opened: (token, campaignId) => opts.sessions.opened(token, campaignId),
    closed(token) {
      held.delete(token);
      return opts.sessions.closed(token);
    },
    release(token) {
      held.delete(token);
      opts.sessions.release(token);
    },
  };
  const releaseHeld = (): void => {
    for (const token of held) opts.sessions.release(token);
    held.clear();
  };
  opts.abandon?.addEventListener('abort', releaseHeld, { once: true });

  const outer = opts.abandon === undefined ? null : anySignal(opts.signal, opts.abandon);
  const runDeadline = deadline(opts.timeoutMs + early, outer?.signal ?? opts.signal);
  let deadlineAt = start + opts.timeoutMs;
  let signal = runDeadline.signal;
  const log = withFields(opts.log, { correlationId });
  const priority = opts.check.budgetPriority ?? 'normal';
  // Time spent waiting for the environment's request budget: not the API's time (see `admit`).
  let budgetWaitMs = 0;

  const ctx: CheckContext = {
    // Only this check's own section and the environment's shared settings: never the API key.
    config: sectionOf(opts.environment, opts.check),
    environment: checkEnvironmentOf(opts.environment),
    client: opts.client,
    get signal() {
      return signal;
    },
    log,
    correlationId,
    runNumber: opts.runNumber,
    sessions,
    createdSessions: opts.createdSessions,
    retained<T extends object>(init: () => T): T {
      const kept = opts.retained.get(opts.check.name);
      if (kept !== undefined) return kept as T;
      const made = init();
      opts.retained.set(opts.check.name, made);
      return made;
    },
    now,
    async acquireBudget() {
      if (startPending) {
        // The first request goes out at the run's instant, not before (see `startAt`).
        startPending = false;
        // On the wall clock, the one the schedule names instants in; the thread may sleep
        // through the last stretch unless another request's answer is on its way.
        await waitUntil(startedAt, { now: wallClock, reading: () => callsInFlight() > 0 });
        start = now();
      }
      // Never wait for a Retry-After that outlasts the run: fail now, as rate limited. Nor for a
      // budget token that cannot come before the deadline: fail now, as `budget`.
      const maxWaitMs = Math.max(0, deadlineAt - now());
      const estimateMs = opts.budget.waitEstimateMs(priority);
      if (estimateMs > maxWaitMs) throw new BudgetWaitError(estimateMs, maxWaitMs);
      // A deadline that comes while the request waits for its token is a BudgetWaitError too.
      await admit(opts.gate, opts.budget, {
        signal,
        maxWaitMs,
        priority,
        now,
        onBudgetWait: (ms) => (budgetWaitMs += ms),
      });
    },
    sleep: (ms) => delay(ms, undefined, { signal }),
    step(name, response, expectedStatus) {
      opts.gate.observe(response.statusCode, response.retryAfterMs);
      responses.push({
        operation: response.operation,
        code: response.statusCode === null ? 'none' : String(response.statusCode),
      });
      const record = stepRecord(name, response, expectedStatus);
      steps.push(record);
      return record;
    },
    contract: (check, result, detail) =>
      contractChecks.push(detail === undefined ? { check, result } : { check, result, detail }),
    cleanup: (fn) => cleanups.push(fn),
  };

  let outcome: CheckOutcome<unknown> | { outcome: 'fail'; reason: string; facts: null };
  try {
    outcome = await opts.check.run(ctx);
  } catch (err) {
    const aborted = signal.aborted;
    log.warn({ err, aborted }, 'check run ended with an error');
    // Told to wait longer than the run may: the API's rate limit, not a fault of the check; a
    // budget token that could not come in time is the monitor's own pacing (`budget`).
    const reason =
      err instanceof BudgetWaitError
        ? 'budget'
        : aborted
          ? 'timeout'
          : err instanceof RetryAfterError
            ? 'rate_limited'
            : 'error';
    outcome = { outcome: 'fail', reason, facts: null };
  }

  runDeadline.release();
  outer?.release();

  // Cleanups run newest first, under their own deadline, and never change the outcome. The run
  // waits for them no longer than that deadline: a cleanup that overstays it (a close whose answer
  // never comes, a ledger write that hangs) goes on alone, and what it held is the reaper's.
  const cleanupMs = opts.cleanupTimeoutMs ?? 15_000;
  const cleanupDeadline = deadline(cleanupMs, opts.abandon);
  signal = cleanupDeadline.signal;
  deadlineAt = now() + cleanupMs;
  const cleaned = (async () => {
    for (const cleanup of cleanups.reverse()) {
      try {
        await cleanup();
      } catch (err) {
        log.warn({ err }, 'check cleanup failed');
      }
    }
  })();
  const overran = untilAborted(cleanupDeadline.signal);
  const inTime = await Promise.race([cleaned.then(() => true), overran.promise.then(() => false)]);
  overran.release();
  cleanupDeadline.release();
  if (!inTime) log.warn({ cleanupMs }, 'check cleanups overran their deadline; left to the reaper');
  releaseHeld();
  opts.abandon?.removeEventListener('abort', releaseHeld);

  return {
    check: opts.check.name,
    environment: opts.environment.name,
    outcome: outcome.outcome,
    reason: outcome.reason,
    summary: opts.check.summary(outcome.facts),
    details: opts.check.details?.(outcome.facts) ?? {},
    startedAt,
    durationMs: round(now() - start - budgetWaitMs),
    budgetWaitMs: round(budgetWaitMs),
    steps,
    facts: outcome.facts,
    responses,
    contractChecks,
  };
}

function stepRecord(
  name: string,
  response: ApiResponse,
  expectedStatus?: (statusCode: number) => boolean,
): StepRecord {
  let error: string | null = null;
  const status = response.statusCode;
  if (response.transportError) error = response.transportError.message;
  else if (response.bodyError) error = `response body: ${response.bodyError}`;
  else if (status !== null && status >= 400 && !(expectedStatus?.(status) ?? false)) {
    // The API's own words help on-call; they stay text (bounded, sanitized by the client).
    error = response.errorMessage
      ? `HTTP ${response.statusCode}: ${response.errorMessage}`
      : `HTTP ${response.statusCode}`;
  }
  return {
    name,
    method: response.method,
    // Session tokens (also as analytics ids) stay out of traces, status pages and logs.
    path: response.path.replace(/\/sessions\/[^/?]+/, '/sessions/{token}'),
    statusCode: response.statusCode,
    durationMs: round(response.durationMs),
    requestId: response.requestId,
    error,
  };
}

/** A signal that aborts when either of two does, and the way to stop following them. */
function anySignal(
  a: AbortSignal | undefined,
  b: AbortSignal,
): { signal: AbortSignal; release(): void } {
  const controller = new AbortController();
  const onA = (): void => controller.abort(a?.reason);
  const onB = (): void => controller.abort(b.reason);
  if (a?.aborted) onA();
  else if (b.aborted) onB();
  else {
    a?.addEventListener('abort', onA, { once: true });
    b.addEventListener('abort', onB, { once: true });
  }
  return {
    signal: controller.signal,
    release() {
      a?.removeEventListener('abort', onA);
      b.removeEventListener('abort', onB);
    },
  };
}

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
