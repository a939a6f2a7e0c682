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
  const clock = runClock(opts);
  const held = holdSessions(opts.sessions, opts.abandon);
  const outer = opts.abandon === undefined ? null : anySignal(opts.signal, opts.abandon);
  const runDeadline = deadline(opts.timeoutMs + clock.early, outer?.signal ?? opts.signal);
  const start = clock.now() + clock.early;
  const run: RunState = {
    start,
    startPending: clock.early > 0,
    signal: runDeadline.signal,
    deadlineAt: start + opts.timeoutMs,
    budgetWaitMs: 0,
    steps: [],
    responses: [],
    contractChecks: [],
    cleanups: [],
  };
  const correlationId = randomUUID();
  const log = withFields(opts.log, { correlationId });
  const ctx = checkContext(opts, run, clock, { sessions: held.tracker, log, correlationId });
  const outcome = await outcomeOf(opts.check, ctx, run, log);
  runDeadline.release();
  outer?.release();
  await runCleanups(run, opts, clock.now, log);
  held.release();
  return {
    check: opts.check.name,
    environment: opts.environment.name,
    outcome: outcome.outcome,
    reason: outcome.reason,
    summary: opts.check.summary(outcome.facts),
    details: opts.check.details?.(outcome.facts) ?? {},
    startedAt: clock.startedAt,
    durationMs: round(clock.now() - run.start - run.budgetWaitMs),
    budgetWaitMs: round(run.budgetWaitMs),
    steps: run.steps,
    facts: outcome.facts,
    responses: run.responses,
    contractChecks: run.contractChecks,
  };
}

/** What a run's context and the runner share while the run goes on. */
interface RunState {
  /** Monotonic start of the run; re-taken when the wait for the run's instant ends. */
  start: number;
  /** The first request still waits for the run's instant (`RunOptions.startAt`). */
  startPending: boolean;
  /** The run's signal: its deadline's, then, once the check returns, its cleanups'. */
  signal: AbortSignal;
  /** When that signal's deadline comes (monotonic): no admission waits past it. */
  deadlineAt: number;
  /** Time spent waiting for the environment's request budget: not the API's time (see `admit`). */
  budgetWaitMs: number;
  steps: StepRecord[];
  responses: CheckResult['responses'];
  contractChecks: CheckResult['contractChecks'];
  cleanups: Array<() => Promise<void>>;
}

/** The clocks of a run and when it starts. */
interface RunClock {
  /** Monotonic clock in ms. */
  now: () => number;
  /** Wall clock in ms: the one the schedule names instants in. */
  wallClock: () => number;
  /** The run's start on the wall clock (`CheckResult.startedAt`). */
  startedAt: number;
  /** How long before its instant the run was set up (0 when set up late). */
  early: number;
}

function runClock(opts: RunOptions): RunClock {
  const now = opts.now ?? (() => performance.now());
  const wallClock = opts.wallNow ?? Date.now;
  const setUpAt = wallClock();
  // A run set up ahead of its instant starts at it; one set up late starts now.
  const early = opts.startAt === undefined ? 0 : Math.max(0, opts.startAt - setUpAt);
  return { now, wallClock, startedAt: setUpAt + early, early };
}

/**
 * The run's view of the environment's session tracker: it keeps the tokens this run holds away
 * from the reaper, and `release` hands them back when the run ends or is abandoned, whatever its
 * cleanups managed, so that no token is held for ever.
 */
function holdSessions(
  tracker: SessionTracker,
  abandon: AbortSignal | undefined,
): { tracker: SessionTracker; release(): void } {
  const held = new Set<string>();
  const releaseHeld = (): void => {
    for (const token of held) tracker.release(token);
    held.clear();
  };
  abandon?.addEventListener('abort', releaseHeld, { once: true });
  return {
    tracker: {
      async create(body, options, admitCreate) {
        const created = await tracker.create(body, options, admitCreate);
        for (const token of created.tokens) held.add(token);
        return created;
      },
      opened: (token, campaignId) => tracker.opened(token, campaignId),
      closed(token) {
        held.delete(token);
        return tracker.closed(token);
      },
      release(token) {
        held.delete(token);
        tracker.release(token);
      },
    },
    release() {
      releaseHeld();
      abandon?.removeEventListener('abort', releaseHeld);
    },
  };
}

/** The context a check runs in: only its own section, the run's signal, steps and cleanups. */
function checkContext(
  opts: RunOptions,
  run: RunState,
  clock: RunClock,
  own: { sessions: SessionTracker; log: CheckLogger; correlationId: string },
): CheckContext {
  return {
    // Only this check's own section and the environment's shared settings: never the API key.
    config: sectionOf(opts.environment, opts.check),
    environment: checkEnvironmentOf(opts.environment),
    client: opts.client,
    get signal() {
      return run.signal;
    },
    log: own.log,
    correlationId: own.correlationId,
    runNumber: opts.runNumber,
    sessions: own.sessions,
    createdSessions: opts.createdSessions,
    retained<T extends object>(init: () => T): T {
      const kept = opts.retained.get(opts.check.name);
      if (kept !== undefined) return kept as T;
      const made = init();
      opts.retained.set(opts.check.name, made);
      return made;
    },
    now: clock.now,
    acquireBudget: () => acquireBudget(opts, run, clock),
    sleep: (ms) => delay(ms, undefined, { signal: run.signal }),
    step(name, response, expectedStatus) {
      opts.gate.observe(response.statusCode, response.retryAfterMs);
      run.responses.push({
        operation: response.operation,
        code: response.statusCode === null ? 'none' : String(response.statusCode),
      });
      const record = stepRecord(name, response, expectedStatus);
      run.steps.push(record);
      return record;
    },
    contract: (check, result, detail) =>
      run.contractChecks.push(detail === undefined ? { check, result } : { check, result, detail }),
    cleanup: (fn) => run.cleanups.push(fn),
  };
}

/** Admits one request of the run: at its instant, within its deadline, through gate and budget. */
async function acquireBudget(opts: RunOptions, run: RunState, clock: RunClock): Promise<void> {
  const { now } = clock;
  if (run.startPending) {
    // The first request goes out at the run's instant, not before (see `startAt`).
    run.startPending = false;
    // On the wall clock, the one the schedule names instants in; the thread may sleep
    // through the last stretch unless another request's answer is on its way.
    await waitUntil(clock.startedAt, { now: clock.wallClock, reading: () => callsInFlight() > 0 });
    run.start = now();
  }
  const priority = opts.check.budgetPriority ?? 'normal';
  // Never wait for a Retry-After that outlasts the run: fail now, as rate limited. Nor for a
  // budget token that cannot come before the deadline: fail now, as `budget`.
  const maxWaitMs = Math.max(0, run.deadlineAt - now());
  const estimateMs = opts.budget.waitEstimateMs(priority);
  if (estimateMs > maxWaitMs) throw new BudgetWaitError(estimateMs, maxWaitMs);
  // A deadline that comes while the request waits for its token is a BudgetWaitError too.
  await admit(opts.gate, opts.budget, {
    signal: run.signal,
    maxWaitMs,
    priority,
    now,
    onBudgetWait: (ms) => (run.budgetWaitMs += ms),
  });
}

/** The check's own outcome, or the failure its error means. */
async function outcomeOf(
  check: AnyCheck,
  ctx: CheckContext,
  run: RunState,
  log: CheckLogger,
): Promise<CheckOutcome<unknown> | { outcome: 'fail'; reason: string; facts: null }> {
  try {
    return await check.run(ctx);
  } catch (err) {
    const aborted = run.signal.aborted;
    log.warn({ err, aborted }, 'check run ended with an error');
    return { outcome: 'fail', reason: failureReason(err, aborted), facts: null };
  }
}

/**
 * Why a run that threw failed. Told to wait longer than the run may: the API's rate limit, not a
 * fault of the check; a budget token that could not come in time is the monitor's own pacing
 * (`budget`).
 */
function failureReason(err: unknown, aborted: boolean): string {
  if (err instanceof BudgetWaitError) return 'budget';
  if (aborted) return 'timeout';
  if (err instanceof RetryAfterError) return 'rate_limited';
  return 'error';
}

/**
 * Runs the cleanups newest first, under their own deadline; they never change the outcome. The
 * run waits for them no longer than that deadline: a cleanup that overstays it (a close whose
 * answer never comes, a ledger write that hangs) goes on alone, and what it held is the reaper's.
 */
async function runCleanups(
  run: RunState,
  opts: RunOptions,
  now: () => number,
  log: CheckLogger,
): Promise<void> {
  const cleanupMs = opts.cleanupTimeoutMs ?? 15_000;
  const cleanupDeadline = deadline(cleanupMs, opts.abandon);
  run.signal = cleanupDeadline.signal;
  run.deadlineAt = now() + cleanupMs;
  const cleaned = (async () => {
    for (const cleanup of run.cleanups.reverse()) {
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
