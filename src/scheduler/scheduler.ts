/**
 * One schedule per environment and check, driven by node-cron. Runs of the same check never
 * overlap (a run that would is counted as skipped with reason `overlap`); while the API's
 * Retry-After is in force, runs are skipped with `rate_limit_backoff`; when the request budget
 * could not serve a run in time, with `budget`. Each schedule gets a random but fixed start offset
 * inside its interval, so the environments do not fire together. The whole seconds of the offset are in the cron expression;
 * cron cannot express the rest, under a second, so each tick waits that long before it fires:
 * without it, at 1000 environments on 60 s pings some 17 runs would start in the same millisecond
 * of every second, one after another, and the last of them measurably late.
 */
import { createTask, type ScheduledTask } from 'node-cron';
import { setTimeout as delay } from 'node:timers/promises';
import type { AnyCheck, CheckLogger, CheckResult } from '../checks/check.js';
import type { EnvironmentRuntime } from '../environment.js';
import type { SkipReason } from '../vocabulary.js';
import { cronWithOffset } from './cron.js';

export interface SchedulerOptions {
  environments: EnvironmentRuntime[];
  checks: readonly AnyCheck[];
  onResult: (result: CheckResult) => void;
  onSkip: (environment: string, check: string, reason: SkipReason) => void;
  log: CheckLogger;
  /** Source of the start offsets; tests pass a fixed one. */
  random?: () => number;
}

/** How long the shutdown sweep may take, after in-flight runs ended. */
export const SHUTDOWN_SWEEP_MS = 2_000;

export interface ScheduledTaskInfo {
  environment: string;
  check: string;
  cron: string;
  /** The task's start offset inside its interval, ms; `offsetMs % 1000` is waited on each tick. */
  offsetMs: number;
}

export class Scheduler {
  private readonly tasks: ScheduledTask[] = [];
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly abort = new AbortController();
  /** Ticks waiting out their sub-second offset; cleared on stop. */
  private readonly pendingTicks = new Set<NodeJS.Timeout>();
  private stopping = false;
  readonly schedule: ScheduledTaskInfo[] = [];

  constructor(private readonly opts: SchedulerOptions) {}

  /**
   * Creates and starts the tasks: one node-cron task per distinct expression, ticking every run
   * that shares it. At 1000 environments on 60 s pings that is at most 60 tasks instead of 1000:
   * node-cron parses its expression and works out the next date, with time-zone arithmetic, per
   * task at start and at every firing, which at one task per run was the largest part of the
   * start-up (bench/README.md, scale mode).
   */
  start(): void {
    const random = this.opts.random ?? Math.random;
    const byCron = new Map<string, Array<() => void>>();
    for (const env of this.opts.environments) {
      for (const check of this.opts.checks) {
        if (!env.enabled(check)) continue;
        const interval = env.intervalFor(check);
        const offsetMs = Math.floor(random() * interval);
        const cron = cronWithOffset(interval, offsetMs);
        if (cron === null) throw new Error(`interval ${interval} ms cannot be scheduled by cron`);
        const ticks = byCron.get(cron) ?? [];
        ticks.push(() => this.tick(env, check, offsetMs % 1000));
        byCron.set(cron, ticks);
        this.schedule.push({ environment: env.name, check: check.name, cron, offsetMs });
      }
    }
    for (const [cron, ticks] of byCron) {
      const task = createTask(cron, () => {
        for (const tick of ticks) tick();
      });
      this.tasks.push(task);
      void task.start();
    }
  }

  /** A cron tick: fires now, or after the sub-second part of the task's offset. */
  private tick(env: EnvironmentRuntime, check: AnyCheck, subSecondMs: number): void {
    if (subSecondMs === 0) {
      this.fire(env, check);
      return;
    }
    const timer = setTimeout(() => {
      this.pendingTicks.delete(timer);
      this.fire(env, check);
    }, subSecondMs);
    this.pendingTicks.add(timer);
  }

  /** A task's tick: starts a run unless it must be skipped (overlap, Retry-After, budget). */
  fire(env: EnvironmentRuntime, check: AnyCheck): void {
    if (this.stopping) return;
    const key = `${env.name}/${check.name}`;
    const skip = this.skipReason(env, check, key);
    if (skip !== null) {
      this.opts.onSkip(env.name, check.name, skip);
      return;
    }
    const run = env
      .run(check, this.abort.signal)
      .then(async (result) => {
        this.opts.onResult(result);
        // Leftovers are closed between runs of session-creating checks, never under a run that
        // owns them.
        if (!this.sessionsInUse(env, check)) {
          await env.reaper.sweep({ signal: this.abort.signal });
        }
      })
      .catch((err: unknown) => this.opts.log.error({ err, environment: env.name }, 'run failed'))
      .finally(() => this.inFlight.delete(key));
    this.inFlight.set(key, run);
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
    if (this.inFlight.has(key)) return 'overlap';
    if (!env.gate.isOpen()) return 'rate_limit_backoff';
    // A run that creates sessions needs the ledger: never create what cannot be recorded.
    if (check.createsSessions === true && !env.ledgerWritable()) return 'ledger_unwritable';
    if (env.budget.waitEstimateMs() > env.timeoutFor(check)) return 'budget';
    return null;
  }

  /** Number of runs in flight. */
  get running(): number {
    return this.inFlight.size;
  }

  /**
   * Graceful stop: no new runs; in-flight runs get `graceMs` to finish, then are aborted (their
   * cleanups still close their sessions); finally every environment's leftovers are closed.
   */
  async stop(graceMs: number): Promise<void> {
    this.stopping = true;
    for (const task of this.tasks) await task.destroy();
    for (const timer of this.pendingTicks) clearTimeout(timer);
    this.pendingTicks.clear();
    const settled = Promise.allSettled([...this.inFlight.values()]);
    const finished = await Promise.race([settled.then(() => true), delay(graceMs, false)]);
    if (!finished) {
      this.opts.log.warn({ running: this.inFlight.size }, 'aborting runs still in flight');
      this.abort.abort(new Error('shutting down'));
      await Promise.allSettled([...this.inFlight.values()]);
    }
    // Short: SIGTERM must end the process within 15 s; what stays open is closed at next start.
    const sweepDeadline = AbortSignal.timeout(SHUTDOWN_SWEEP_MS);
    await Promise.all(
      this.opts.environments.map((env) => env.reaper.sweep({ force: true, signal: sweepDeadline })),
    );
  }
}
