/**
 * Everything the monitor keeps per watched environment: its API client, its request budget, its
 * Retry-After gate and its view of the session ledger. The scheduler and the one-shot `check`
 * command both run checks through this.
 */
import type { Dispatcher } from 'undici';
import { ApiClient } from './api/client.js';
import type { Check, CheckLogger, CheckResult, SessionTracker } from './checks/check.js';
import type { CheckName } from './checks/results.js';
import type { EnvironmentConfig } from './config/index.js';
import { BackoffGate } from './limits/backoff-gate.js';
import { RequestBudget } from './limits/request-budget.js';
import { runCheck } from './runner.js';
import type { SessionLedger } from './sessions/ledger.js';
import { SessionReaper } from './sessions/reaper.js';
import type { CreateIntent } from './sessions/ledger.js';
import { SessionTracking } from './sessions/tracker.js';

export interface EnvironmentRuntimeOptions {
  ledger: SessionLedger;
  userAgent: string;
  log: CheckLogger;
  dispatcher?: Dispatcher;
  /** A create intent that ended with no token: a session nobody can close (reported). */
  onUnrecoverable?: (intent: CreateIntent) => void;
  /** How long a create's late answer is still read (default `LATE_ANSWER_GRACE_MS`). */
  lateAnswerGraceMs?: number;
}

export class EnvironmentRuntime {
  readonly client: ApiClient;
  readonly budget: RequestBudget;
  readonly gate: BackoffGate;
  readonly sessions: SessionTracker;
  readonly tracking: SessionTracking;
  readonly reaper: SessionReaper;
  private readonly runNumbers: Record<CheckName, number> = { ping: 0, lifecycle: 0 };

  constructor(
    readonly config: EnvironmentConfig,
    private readonly opts: EnvironmentRuntimeOptions,
  ) {
    this.client = new ApiClient({
      baseUrl: config.baseUrl,
      apiKey: config.apiKey,
      userAgent: opts.userAgent,
      ...(opts.dispatcher ? { dispatcher: opts.dispatcher } : {}),
      // Every 429 and every 503 with Retry-After closes the gate, whichever path received it.
      onResponse: (response) => this.gate.observe(response.statusCode, response.retryAfterMs),
    });
    this.budget = new RequestBudget(config.requestBudgetPerSecond);
    const { ledger } = opts;
    const name = config.name;
    const onUnrecoverable = opts.onUnrecoverable ?? (() => {});
    this.gate = new BackoffGate({
      onClamp: (requestedMs, appliedMs) =>
        opts.log.warn({ requestedMs, appliedMs }, 'Retry-After clamped to its maximum'),
    });
    this.reaper = new SessionReaper({
      environment: name,
      client: this.client,
      ledger,
      budget: this.budget,
      gate: this.gate,
      log: opts.log,
      timeoutMs: config.ping.timeoutMs,
      onUnrecoverable,
    });
    this.tracking = new SessionTracking({
      environment: name,
      ledger,
      client: this.client,
      reaper: this.reaper,
      log: opts.log,
      onUnrecoverable,
      ...(opts.lateAnswerGraceMs === undefined ? {} : { graceMs: opts.lateAnswerGraceMs }),
    });
    this.sessions = this.tracking;
  }

  get name(): string {
    return this.config.name;
  }

  /** The deadline of one run of `check` in this environment. */
  timeoutFor(check: CheckName): number {
    // A ping run is one request; a little headroom lets the request's own timeout fire first.
    return check === 'ping' ? this.config.ping.timeoutMs + 1_000 : this.config.lifecycle.timeoutMs;
  }

  intervalFor(check: CheckName): number {
    return check === 'ping' ? this.config.ping.intervalMs : this.config.lifecycle.intervalMs;
  }

  enabled(check: CheckName): boolean {
    return check === 'ping' ? this.config.ping.enabled : this.config.lifecycle.enabled;
  }

  /** False while the session ledger cannot be written (runs that create sessions are skipped). */
  ledgerWritable(): boolean {
    return this.opts.ledger.writable;
  }

  /** Runs `check` once in this environment. Never throws. */
  run(check: Check, signal?: AbortSignal): Promise<CheckResult> {
    const runNumber = this.runNumbers[check.name]++;
    return runCheck({
      check,
      environment: this.config,
      client: this.client,
      budget: this.budget,
      gate: this.gate,
      sessions: this.sessions,
      log: this.opts.log,
      runNumber,
      timeoutMs: this.timeoutFor(check.name),
      cleanupTimeoutMs: this.config.ping.timeoutMs + 5_000,
      ...(signal ? { signal } : {}),
    });
  }

  async close(): Promise<void> {
    await this.tracking.settled();
    await this.client.close();
  }
}
