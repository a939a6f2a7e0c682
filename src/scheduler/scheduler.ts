/**
 * One schedule per environment and check, at any interval of at least a second. Runs of the same
 * check never overlap (a run that would is counted as skipped with reason `overlap`); while the
 * API's Retry-After is in force, runs are skipped with `rate_limit_backoff`; when the request
 * budget could not serve a run in time, with `budget`. Each schedule gets a random but fixed start
 * offset inside its interval, to the millisecond, so the environments do not fire together (at
 * 1000 environments on 60 s pings, offsets of whole seconds would start some 17 runs in the same
 * millisecond of every second, the last of them measurably late). Each interval has one ticker
 * (`interval-ticker.ts`), waking a second before each of its periods, and that wake arms a timer
 * of its own for every run of the interval in the coming period: it wakes `FIRE_LEAD_MS` before
 * the run's instant, prepares (`SchedulerOptions.prepare`, then the run's set-up), and the run's
 * first request goes out at the instant (`RunOptions.startAt`). One ticker per interval, not per
 * run: a daemon with two environments wakes once a minute for its pings, not twice.
 *
 * No environment goes silent (docs/architecture.md): a run's in-flight mark, which makes the next
 * tick an `overlap` skip, lasts as long as the run and no longer. Closing leftover sessions after a
 * run is a sweep of its own, one at a time per environment and under its own deadline, never part
 * of the run: a sweep waits for budget tokens that the budget keeps for the next ping, and when
 * that wait held the ping's mark, every ping was skipped as an overlap and the reservation kept
 * the sweep waiting, for minutes. And no run stays in flight past its deadline plus its cleanups'
 * bound (`EnvironmentRuntime.runBoundFor`) and `RUN_SETTLE_MS`: one that would is abandoned
 * (aborted, its mark cleared, its sessions left in the ledger for the reaper), logged and
 * counted (`onAbandon`, `isa_check_runs_abandoned_total`).
 *
 * A check with follow-up runs (`Check.followUp`, e.g. confirmation pings) also gets one
 * `FollowUpSequence` per environment: a scheduled result that starts one arms a timer, and each
 * tick runs the check once more, unless that cannot happen at once and alone. A tick is skipped,
 * never queued, while a run of the check is in flight (scheduled or follow-up), while Retry-After
 * is in force, when the request budget has no token within 100 ms, and when the next scheduled run
 * would start before this one's deadline (so the two never overlap).
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { AnyCheck, CheckLogger, CheckResult, FollowUpEvent } from '../kernel/check.js';
import type { EnvironmentRuntime } from '../environment.js';
import type { SkipReason } from '../kernel/vocabulary.js';
import { deadline } from '../limits/timers.js';
import { IntervalTicker } from './interval-ticker.js';
import { FollowUpSequence, nextFireAt } from './follow-up.js';

export interface SchedulerOptions {
  environments: EnvironmentRuntime[];
  checks: readonly AnyCheck[];
  onResult: (result: CheckResult) => void;
  onSkip: (environment: string, check: string, reason: SkipReason) => void;
  log: CheckLogger;
  /** Source of the start offsets; tests pass a fixed one. */
  random?: () => number;
  /** A follow-up sequence started or ended (recorded in the check's follow-up metrics). */
  onFollowUp?: (environment: string, check: string, event: FollowUpEvent) => void;
  /** Monotonic clock of follow-up windows, ms; tests on a fake clock pass `Date.now`. */
  now?: () => number;
  /**
   * Called when a scheduled run wakes, `FIRE_LEAD_MS` before its instant: work that would
   * otherwise land inside the run (the measurement worker collects its young generation here).
   */
  prepare?: () => void;
  /** A run stayed in flight past its bound and was abandoned (see the module comment). */
  onAbandon?: (environment: string, check: string) => void;
}

/**
 * How long past its deadline and its cleanups' deadline a run may still be settling (its last
 * ledger write, its result) before the scheduler abandons it.
 */
export const RUN_SETTLE_MS = 1_000;

/**
 * How long before its instant a scheduled run wakes: enough for `prepare` (a young-generation
 * collection, about 1 ms) and the run's set-up, so that neither delays the first request
 * (bench/LOG.md, "Drift").
 */
export const FIRE_LEAD_MS = 10;

/**
 * How far ahead of its period an interval's ticker wakes to arm the period's runs (a whole period
 * for a 1 s interval): each run then has its own timer, armed well before its instant.
 */
const TICK_AHEAD_MS = 1_000;

/** One scheduled check in one environment, and its start offset inside its interval, ms. */
interface Run {
  env: EnvironmentRuntime;
  check: AnyCheck;
  offsetMs: number;
}

/** One check's follow-up runs in one environment. */
interface FollowUpState {
  env: EnvironmentRuntime;
  check: AnyCheck;
  sequence: FollowUpSequence;
  /** The scheduled task's start offset, to know when its next run starts. */
  offsetMs: number;
  timer: NodeJS.Timeout | null;
  running: Promise<void> | null;
}

/**
 * The longest a follow-up run may wait for its request-budget token: a token that is not there
 * (almost) at once means other requests are queued, and a follow-up never queues behind them.
 * The wait is estimated at the check's own priority: a confirmation ping, like any ping, goes
 * before queued lifecycle requests and may take the token kept for pings.
 */
export const FOLLOW_UP_MAX_BUDGET_WAIT_MS = 100;

/** How long the shutdown sweep may take, after in-flight runs ended. */
export const SHUTDOWN_SWEEP_MS = 2_000;

export interface ScheduledTaskInfo {
  environment: string;
  check: string;
  /** The check's interval in this environment, ms. */
  intervalMs: number;
  /**
   * The run's start offset inside its interval, ms: the runs are due at `k × intervalMs + offsetMs`
   * (Unix time, ms). One ticker per interval wakes a second before each period and arms its runs
   * (see the module comment).
   */
  offsetMs: number;
}

/** One interval's ticker and the runs it arms (the runs change when the configuration does). */
interface IntervalGroup {
  ticker: IntervalTicker;
  runs: Run[];
}

export class Scheduler {
  /** One ticker per interval in use; a group goes when its last run does. */
  private readonly groups = new Map<number, IntervalGroup>();
  /** The environments scheduled now, in the order they were added. */
  private readonly environments = new Map<string, EnvironmentRuntime>();
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly abort = new AbortController();
  /** Ends the leftover sweeps in progress: at stop, at once (the shutdown sweep takes over). */
  private readonly sweepsAbort = new AbortController();
  /** Runs waiting for their instant, with their environment's name; cleared on stop. */
  private readonly pendingTicks = new Map<NodeJS.Timeout, string>();
  private stopping = false;
  private readonly followUps = new Map<string, FollowUpState>();
  /** The leftover sweep in progress per environment (at most one). */
  private readonly sweeps = new Map<string, Promise<void>>();

  constructor(private readonly opts: SchedulerOptions) {}

  /** Every scheduled check, environment by environment: what the "schedules started" line logs. */
  get schedule(): ScheduledTaskInfo[] {
    const byEnvironment = new Map<string, ScheduledTaskInfo[]>(
      [...this.environments.keys()].map((name) => [name, []]),
    );
    for (const [intervalMs, group] of this.groups) {
      for (const { env, check, offsetMs } of group.runs) {
        byEnvironment
          .get(env.name)
          ?.push({ environment: env.name, check: check.name, intervalMs, offsetMs });
      }
    }
    const order = new Map(this.opts.checks.map((check, i) => [check.name, i]));
    return [...byEnvironment.values()].flatMap((tasks) =>
      tasks.sort((a, b) => (order.get(a.check) ?? 0) - (order.get(b.check) ?? 0)),
    );
  }

  /**
   * Starts one ticker per interval (`interval-ticker.ts`), arming every run of that interval for
   * the period after its wake. At 1000 environments on 60 s pings that is one timer a minute
   * instead of 1000 (bench/README.md, scale mode).
   */
  start(): void {
    this.add(this.opts.environments);
  }

  /**
   * Schedules `environments` (at start, and for a configuration reload). A check keeps its start
   * offset from `keep` (by `environment/check`) when its interval is the same: a reload does not
   * move a schedule, so it fires no run sooner than it would have (docs/configuration.md,
   * "Reload"). New schedules get a random offset, as at start.
   */
  add(
    environments: readonly EnvironmentRuntime[],
    keep: ReadonlyMap<string, ScheduledTaskInfo> = new Map(),
  ): void {
    if (this.stopping) return;
    const random = this.opts.random ?? Math.random;
    const byInterval = new Map<number, Run[]>();
    for (const env of environments) {
      this.environments.set(env.name, env);
      for (const check of this.opts.checks) {
        if (!env.enabled(check)) continue;
        const interval = env.intervalFor(check);
        const key = `${env.name}/${check.name}`;
        const kept = keep.get(key);
        const offsetMs =
          kept?.intervalMs === interval ? kept.offsetMs : Math.floor(random() * interval);
        let runs = byInterval.get(interval);
        if (runs === undefined) {
          runs = [];
          byInterval.set(interval, runs);
        }
        runs.push({ env, check, offsetMs });
        const policy = check.followUp?.policy(env.section(check));
        if (policy) {
          const sequence = new FollowUpSequence(policy);
          const state = { env, check, sequence, offsetMs, timer: null, running: null };
          this.followUps.set(key, state);
        }
      }
    }
    const wallNow = Date.now();
    for (const [interval, runs] of byInterval) {
      let group = this.groups.get(interval);
      const started = group !== undefined;
      if (group === undefined) {
        const ticker: IntervalTicker = new IntervalTicker({
          intervalMs: interval,
          aheadMs: Math.min(TICK_AHEAD_MS, interval),
          onPeriod: (periodStart) => {
            for (const run of created.runs)
              this.arm(run.env, run.check, periodStart + run.offsetMs);
          },
        });
        const created: IntervalGroup = { ticker, runs: [] };
        group = created;
        this.groups.set(interval, group);
      }
      // Runs due before the first period the ticker arms get their timers now: as many as fall
      // before it, two for a run late in its period started just before.
      const firstArmed = started ? group.ticker.nextPeriodStart : group.ticker.firstPeriod();
      for (const { env, check, offsetMs } of runs) {
        const due = firstArmed + offsetMs;
        let first = due - interval * Math.floor((due - (wallNow + FIRE_LEAD_MS)) / interval);
        // Reserved now: the first run; arming a run reserves the one after it.
        this.reserve(env, check, first);
        for (; first < firstArmed; first += interval) this.arm(env, check, first);
      }
      group.runs.push(...runs);
      if (!started) group.ticker.start(firstArmed);
    }
  }

  /**
   * Stops scheduling the environment `name` (a configuration reload removed or changed it): its
   * armed runs and follow-up runs are cancelled, while the runs in flight finish under the
   * settings they started with; until they have, a run of the same check is an overlap. Resolves
   * when they have finished.
   */
  remove(name: string): Promise<void> {
    if (!this.environments.delete(name)) return Promise.resolve();
    for (const [interval, group] of this.groups) {
      group.runs = group.runs.filter((run) => run.env.name !== name);
      if (group.runs.length > 0) continue;
      group.ticker.stop();
      this.groups.delete(interval);
    }
    for (const [timer, environment] of this.pendingTicks) {
      if (environment !== name) continue;
      clearTimeout(timer);
      this.pendingTicks.delete(timer);
    }
    const prefix = `${name}/`;
    for (const [key, state] of this.followUps) {
      if (!key.startsWith(prefix)) continue;
      this.followUps.delete(key);
      if (state.sequence.stop() === 'stopped') this.endFollowUp(state, 'stopped');
      else if (state.timer !== null) clearTimeout(state.timer);
      // A follow-up run still in flight holds its check like a scheduled one.
      const running = state.running;
      if (running !== null && !this.inFlight.has(key)) {
        this.inFlight.set(key, running);
        void running.finally(() => {
          if (this.inFlight.get(key) === running) this.inFlight.delete(key);
        });
      }
    }
    const runs = [...this.inFlight].flatMap(([key, run]) => (key.startsWith(prefix) ? [run] : []));
    return Promise.allSettled(runs).then(() => {});
  }

  /**
   * A `first`-priority check (the ping) tells the environment's budget when a run is due
   * (`dueAt`, wall clock, ms), so that no other check's request takes the token it needs then.
   */
  private reserve(env: EnvironmentRuntime, check: AnyCheck, dueAt: number): void {
    if (check.budgetPriority === 'first') env.budget.reserve(dueAt - Date.now());
  }

  /**
   * Wakes `FIRE_LEAD_MS` before `dueAt` (wall clock, ms), prepares, and fires for `dueAt`; and
   * reserves the budget for the run after it (armed by the next tick, at most a period ahead).
   */
  private arm(env: EnvironmentRuntime, check: AnyCheck, dueAt: number): void {
    this.reserve(env, check, dueAt + env.intervalFor(check));
    const timer = setTimeout(
      () => {
        this.pendingTicks.delete(timer);
        this.opts.prepare?.();
        this.fire(env, check, dueAt);
      },
      Math.max(0, dueAt - FIRE_LEAD_MS - Date.now()),
    );
    this.pendingTicks.set(timer, env.name);
  }

  /**
   * Starts a run unless it must be skipped (overlap, Retry-After, budget). `dueAt` (wall clock,
   * ms): the instant its first request goes out, when that is still ahead; default now.
   */
  fire(env: EnvironmentRuntime, check: AnyCheck, dueAt?: number): void {
    if (this.stopping) return;
    const key = `${env.name}/${check.name}`;
    const skip = this.skipReason(env, check, key);
    if (skip !== null) {
      this.opts.onSkip(env.name, check.name, skip);
      return;
    }
    const run = this.bounded(env, check, dueAt, (result) => {
      this.opts.onResult(result);
      this.afterScheduled(key, result);
      // Leftovers are closed between runs of session-creating checks, never under a run that
      // owns them, and never inside a run's in-flight mark (see the module comment).
      if (!this.sessionsInUse(env, check)) this.sweep(env, check);
    }).finally(() => {
      if (this.inFlight.get(key) === run) this.inFlight.delete(key);
    });
    this.inFlight.set(key, run);
  }

  /**
   * Runs `check` in `env` and hands its result to `onResult`, unless the run stays in flight past
   * its bound: then it is abandoned (aborted, its held sessions handed to the reaper), logged and
   * counted, and the returned promise settles at once; a result it brings later is dropped.
   */
  private bounded(
    env: EnvironmentRuntime,
    check: AnyCheck,
    dueAt: number | undefined,
    onResult: (result: CheckResult) => void,
  ): Promise<void> {
    const abandon = new AbortController();
    const boundMs =
      Math.max(0, (dueAt ?? Date.now()) - Date.now()) + env.runBoundFor(check) + RUN_SETTLE_MS;
    let watchdog: NodeJS.Timeout | undefined;
    const overstayed = new Promise<void>((resolve) => {
      watchdog = setTimeout(() => {
        abandon.abort(new Error('abandoned: in flight past its bound'));
        this.opts.log.warn(
          { environment: env.name, check: check.name, boundMs },
          'check run abandoned: still in flight past its deadline and its cleanups; its sessions are left to the reaper',
        );
        this.opts.onAbandon?.(env.name, check.name);
        resolve();
      }, boundMs);
    });
    const finished = env
      .run(check, this.abort.signal, dueAt, abandon.signal)
      .then((result) => {
        if (abandon.signal.aborted) {
          this.opts.log.debug(
            { environment: env.name, check: check.name },
            'an abandoned run ended; its result is dropped',
          );
          return;
        }
        onResult(result);
      })
      .catch((err: unknown) => this.opts.log.error({ err, environment: env.name }, 'run failed'))
      .finally(() => clearTimeout(watchdog));
    return Promise.race([finished, overstayed]);
  }

  /**
   * Closes `env`'s leftover sessions in the background: one sweep at a time per environment, under
   * a deadline of its own (a sweep that meets it stops, and the next goes on), never holding a run.
   * After a run of `check`, its closes have that check's request timeout and the sweep its cleanup
   * bound: the bounds its own settings make plain, not those of the slowest check.
   */
  private sweep(env: EnvironmentRuntime, check: AnyCheck): void {
    if (this.stopping || this.sweeps.has(env.name)) return;
    const bound = deadline(env.cleanupTimeoutFor(check), this.sweepsAbort.signal);
    const sweep = env.reaper
      .sweep({ signal: bound.signal, timeoutMs: env.section(check).requestTimeoutMs })
      .then(
        () => {},
        (err: unknown) => this.opts.log.warn({ err, environment: env.name }, 'sweep failed'),
      )
      .finally(() => {
        bound.release();
        this.sweeps.delete(env.name);
      });
    this.sweeps.set(env.name, sweep);
  }

  /** True while another run that creates sessions is in flight in `env`. */
  private sessionsInUse(env: EnvironmentRuntime, finished: AnyCheck): boolean {
    return this.opts.checks.some(
      (check) =>
        check !== finished &&
        check.createsSessions === true &&
        this.inFlight.has(`${env.name}/${check.name}`),
    );
  }

  private skipReason(env: EnvironmentRuntime, check: AnyCheck, key: string): SkipReason | null {
    // A follow-up run never reaches into a scheduled one's time (see `followUpTick`); this is
    // the guard for a clock that jumped.
    if (this.inFlight.has(key) || this.followUps.get(key)?.running) return 'overlap';
    if (!env.gate.isOpen()) return 'rate_limit_backoff';
    // A run that creates sessions needs the ledger: never create what cannot be recorded.
    if (check.createsSessions === true && !env.ledgerWritable()) return 'ledger_unwritable';
    if (env.budget.waitEstimateMs(check.budgetPriority) > env.timeoutFor(check)) return 'budget';
    return null;
  }

  private now(): number {
    return (this.opts.now ?? (() => performance.now()))();
  }

  /** A scheduled run finished: it may start (or restart) the check's follow-up sequence. */
  private afterScheduled(key: string, result: CheckResult): void {
    const state = this.followUps.get(key);
    if (state === undefined || this.stopping) return;
    const starts = state.check.followUp?.starts(result.facts) ?? false;
    const verdict = state.sequence.scheduled(this.now(), starts);
    if (verdict === 'started') {
      this.opts.onFollowUp?.(state.env.name, state.check.name, { type: 'started' });
      this.armFollowUp(state);
    }
  }

  private armFollowUp(state: FollowUpState): void {
    if (state.timer !== null) clearTimeout(state.timer);
    // A follow-up run is timed like a scheduled one: keep the budget clear for its tick.
    if (state.check.budgetPriority === 'first') {
      state.env.budget.reserve(state.sequence.policy.intervalMs);
    }
    state.timer = setTimeout(() => {
      state.timer = null;
      this.followUpTick(state);
    }, state.sequence.policy.intervalMs);
  }

  private endFollowUp(state: FollowUpState, end: 'recovered' | 'window_elapsed' | 'stopped'): void {
    if (state.timer !== null) clearTimeout(state.timer);
    state.timer = null;
    this.opts.onFollowUp?.(state.env.name, state.check.name, { type: 'ended', end });
  }

  /** A follow-up tick: one more run of the check when it can go out at once and alone. */
  private followUpTick(state: FollowUpState): void {
    if (this.stopping) return;
    const verdict = state.sequence.tick(this.now());
    if (verdict === 'window_elapsed') this.endFollowUp(state, 'window_elapsed');
    if (verdict !== 'run') return;
    this.armFollowUp(state);
    const { env, check } = state;
    const key = `${env.name}/${check.name}`;
    const skip = this.followUpSkip(state, key);
    if (skip !== null) {
      this.opts.log.debug(
        { environment: env.name, check: check.name, reason: skip },
        'follow-up run skipped',
      );
      return;
    }
    const running = this.bounded(env, check, undefined, (result) => {
      this.opts.onResult({ ...result, followUp: true });
      const good = check.followUp?.good(result.facts) ?? false;
      if (state.sequence.result(good) === 'recovered') this.endFollowUp(state, 'recovered');
    }).finally(() => {
      if (state.running === running) state.running = null;
    });
    state.running = running;
  }

  /** Why a follow-up tick cannot run now, or null. Never queued: it is skipped. */
  private followUpSkip(state: FollowUpState, key: string): string | null {
    const { env, check } = state;
    if (this.inFlight.has(key) || state.running !== null) return 'overlap';
    if (!env.gate.isOpen()) return 'rate_limit_backoff';
    if (env.budget.waitEstimateMs(check.budgetPriority) > FOLLOW_UP_MAX_BUDGET_WAIT_MS) {
      return 'budget';
    }
    // Its deadline must pass before the next scheduled run starts: they never overlap.
    const interval = env.intervalFor(check);
    const wallNow = Date.now();
    if (nextFireAt(wallNow, interval, state.offsetMs) - wallNow <= env.timeoutFor(check)) {
      return 'scheduled_run_due';
    }
    return null;
  }

  /** Number of runs in flight, follow-up runs included. */
  get running(): number {
    const followUps = [...this.followUps.values()].filter((s) => s.running !== null).length;
    return this.inFlight.size + followUps;
  }

  /**
   * Graceful stop: no new runs; in-flight runs get `graceMs` to finish, then are aborted (their
   * cleanups still close their sessions); finally every environment's leftovers are closed.
   */
  async stop(graceMs: number): Promise<void> {
    this.stopping = true;
    for (const group of this.groups.values()) group.ticker.stop();
    for (const timer of this.pendingTicks.keys()) clearTimeout(timer);
    this.pendingTicks.clear();
    for (const state of this.followUps.values()) {
      if (state.sequence.stop() === 'stopped') this.endFollowUp(state, 'stopped');
      else if (state.timer !== null) clearTimeout(state.timer);
    }
    const followUpRuns = [...this.followUps.values()].flatMap((s) =>
      s.running ? [s.running] : [],
    );
    // A sweep in progress ends now: the shutdown sweep below takes over from it.
    this.sweepsAbort.abort(new Error('shutting down'));
    await Promise.allSettled([...this.sweeps.values()]);
    const settled = Promise.allSettled([...this.inFlight.values(), ...followUpRuns]);
    const finished = await Promise.race([settled.then(() => true), delay(graceMs, false)]);
    if (!finished) {
      this.opts.log.warn({ running: this.inFlight.size }, 'aborting runs still in flight');
      this.abort.abort(new Error('shutting down'));
      await Promise.allSettled([...this.inFlight.values(), ...followUpRuns]);
    }
    // Short: SIGTERM must end the process within 15 s; what stays open is closed at next start.
    const sweepDeadline = AbortSignal.timeout(SHUTDOWN_SWEEP_MS);
    await Promise.all(
      [...this.environments.values()].map((env) =>
        env.reaper.sweep({ force: true, signal: sweepDeadline }),
      ),
    );
  }
}
