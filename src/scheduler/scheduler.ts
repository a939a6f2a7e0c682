/**
 * One node-cron task per environment and check. Runs of the same check never overlap (a run that
 * would is counted as skipped with reason `overlap`); while the API's Retry-After is in force,
 * runs are skipped with `rate_limit_backoff`; when the request budget could not serve a run in
 * time, with `budget`. Each task gets a random but fixed start offset inside its interval, so the
 * environments do not fire together.
 */
import { createTask, type ScheduledTask } from 'node-cron';
import { setTimeout as delay } from 'node:timers/promises';
import type { Check, CheckLogger, CheckResult } from '../checks/check.js';
import type { CheckName, SkipReason } from '../checks/results.js';
import type { EnvironmentRuntime } from '../environment.js';
import { cronWithOffset } from './cron.js';

export interface SchedulerOptions {
  environments: EnvironmentRuntime[];
  checks: Readonly<Record<CheckName, Check>>;
  onResult: (result: CheckResult) => void;
  onSkip: (environment: string, check: CheckName, reason: SkipReason) => void;
  log: CheckLogger;
  /** Source of the start offsets; tests pass a fixed one. */
  random?: () => number;
}

/** How long the shutdown sweep may take, after in-flight runs ended. */
export const SHUTDOWN_SWEEP_MS = 2_000;

export interface ScheduledTaskInfo {
  environment: string;
  check: CheckName;
  cron: string;
}

export class Scheduler {
  private readonly tasks: ScheduledTask[] = [];
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly abort = new AbortController();
  private stopping = false;
  readonly schedule: ScheduledTaskInfo[] = [];

  constructor(private readonly opts: SchedulerOptions) {}

  /** Creates and starts every task. */
  start(): void {
    const random = this.opts.random ?? Math.random;
    for (const env of this.opts.environments) {
      for (const check of Object.values(this.opts.checks)) {
        if (!env.enabled(check.name)) continue;
        const interval = env.intervalFor(check.name);
        const cron = cronWithOffset(interval, Math.floor(random() * interval));
        if (cron === null) throw new Error(`interval ${interval} ms cannot be scheduled by cron`);
        const task = createTask(cron, () => this.fire(env, check), {
          name: `${env.name}/${check.name}`,
        });
        this.tasks.push(task);
        this.schedule.push({ environment: env.name, check: check.name, cron });
        void task.start();
      }
    }
  }

  /** A task's tick: starts a run unless it must be skipped (overlap, Retry-After, budget). */
  fire(env: EnvironmentRuntime, check: Check): void {
    if (this.stopping) return;
    const key = `${env.name}/${check.name}`;
    const skip = this.skipReason(env, check.name, key);
    if (skip !== null) {
      this.opts.onSkip(env.name, check.name, skip);
      return;
    }
    const run = env
      .run(check, this.abort.signal)
      .then(async (result) => {
        this.opts.onResult(result);
        // Leftovers are closed between lifecycle runs, never under a run that owns them.
        if (!this.inFlight.has(`${env.name}/lifecycle`) || check.name === 'lifecycle') {
          await env.reaper.sweep({ signal: this.abort.signal });
        }
      })
      .catch((err: unknown) => this.opts.log.error({ err, environment: env.name }, 'run failed'))
      .finally(() => this.inFlight.delete(key));
    this.inFlight.set(key, run);
  }

  private skipReason(env: EnvironmentRuntime, check: CheckName, key: string): SkipReason | null {
    if (this.inFlight.has(key)) return 'overlap';
    if (!env.gate.isOpen()) return 'rate_limit_backoff';
    // A run that creates sessions needs the ledger: never create what cannot be recorded.
    if (check === 'lifecycle' && !env.ledgerWritable()) return 'ledger_unwritable';
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
