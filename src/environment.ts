/**
 * Everything the monitor keeps per watched environment: its API client, its request budget, its
 * Retry-After gate and its view of the session ledger. The scheduler and the one-shot `check`
 * command both run checks through this.
 */
import type { Dispatcher } from 'undici';
import { ApiClient } from './api/client.js';
import type { AnyCheck, CheckLogger, CheckResult, SessionTracker } from './kernel/check.js';
import type { ApiResponse } from './kernel/api.js';
import type { EnvironmentConfig } from './config/index.js';
import { proxySettingsOf, runDeadlineMs, sectionOf } from './config/section.js';
import { ClientIdentity } from './api/client-identity.js';
import type { CheckConfigBase } from './config/section.js';
import { BackoffGate } from './limits/backoff-gate.js';
import { RequestBudget } from './limits/request-budget.js';
import { runCheck } from './runner.js';
import { SessionJournal } from './sessions/journal.js';
import type { SessionLedger } from './sessions/ledger.js';
import type { CreateIntent } from './sessions/ledger.js';
import { SessionReaper } from './sessions/reaper.js';
import { SessionTracking } from './sessions/tracker.js';

export interface EnvironmentRuntimeOptions {
  /** The checks of this build (the composition root's list), for the reaper's request timeout. */
  checks: readonly AnyCheck[];
  ledger: SessionLedger;
  userAgent: string;
  log: CheckLogger;
  dispatcher?: Dispatcher;
  /** Sees every response after the Retry-After gate did: contract drift (docs/drift.md). */
  onResponse?: (response: ApiResponse) => void;
  /** A create intent that ended with no token: a session nobody can close (reported). */
  onUnrecoverable?: (intent: CreateIntent) => void;
  /** How long a create's late answer is still read (default `LATE_ANSWER_GRACE_MS`). */
  lateAnswerGraceMs?: number;
  /**
   * The runtime this one replaces (a configuration reload changed the environment): its
   * Retry-After gate, request budget (at the new rate) and session journal carry on, so no wait
   * the API asked for and no cap is reset by a reload (docs/configuration.md, "Reload").
   */
  predecessor?: EnvironmentRuntime;
}

/** The client certificate as loaded, kept current from its files (`api/client-identity.ts`). */
function clientIdentityOf(
  loaded: NonNullable<EnvironmentConfig['clientCertificate']>,
): ClientIdentity {
  return new ClientIdentity(
    { certFile: loaded.certFile, keyFile: loaded.keyFile },
    { cert: loaded.cert, key: loaded.key },
  );
}

export class EnvironmentRuntime {
  readonly client: ApiClient;
  readonly budget: RequestBudget;
  readonly gate: BackoffGate;
  readonly sessions: SessionTracker;
  readonly tracking: SessionTracking;
  readonly reaper: SessionReaper;
  /** Synthetic sessions created here, for checks that follow them (see `sessions/journal.ts`). */
  readonly createdSessions: SessionJournal;
  private readonly runNumbers: Map<string, number>;
  private readonly retained: Map<string, object>;
  /** The reaper's closes are requests like any check's: the longest request timeout. */
  private readonly reaperTimeoutMs: number;

  constructor(
    readonly config: EnvironmentConfig,
    private readonly opts: EnvironmentRuntimeOptions,
  ) {
    this.client = new ApiClient({
      baseUrl: config.baseUrl,
      apiKey: config.apiKey,
      userAgent: opts.userAgent,
      ...(opts.dispatcher ? { dispatcher: opts.dispatcher } : {}),
      // ca_file: every request to the environment trusts it, the reaper's closes included.
      ...(config.extraTrust ? { ca: config.extraTrust.certificates } : {}),
      // The egress proxy and the client certificate: every request, the reaper's closes included.
      ...(config.proxy ? { proxy: proxySettingsOf(config.proxy) } : {}),
      ...(config.clientCertificate ? { identity: clientIdentityOf(config.clientCertificate) } : {}),
      // Every 429 and every 503 with Retry-After closes the gate, whichever path received it.
      onResponse: (response) => {
        this.gate.observe(response.statusCode, response.retryAfterMs);
        opts.onResponse?.(response);
      },
    });
    const predecessor = opts.predecessor;
    this.gate =
      predecessor?.gate ??
      new BackoffGate({
        onClamp: (requestedMs, appliedMs) =>
          opts.log.warn({ requestedMs, appliedMs }, 'Retry-After clamped to its maximum'),
      });
    if (predecessor === undefined) {
      this.budget = new RequestBudget(config.requestBudgetPerSecond);
    } else {
      this.budget = predecessor.budget;
      if (predecessor.config.requestBudgetPerSecond !== config.requestBudgetPerSecond)
        this.budget.setRate(config.requestBudgetPerSecond);
    }
    this.createdSessions = predecessor?.createdSessions ?? new SessionJournal();
    this.runNumbers = predecessor?.runNumbers ?? new Map();
    this.retained = predecessor?.retained ?? new Map();
    this.reaperTimeoutMs = Math.max(
      ...opts.checks.map((check) => sectionOf(config, check).requestTimeoutMs),
    );
    const { ledger } = opts;
    const name = config.name;
    // Recorded with each new session, so a later process can close it even once the
    // environment is no longer configured (sessions/removed.ts).
    ledger.describe(name, {
      baseUrl: config.baseUrl,
      keySource: config.apiKeySource,
      apiKey: config.apiKey,
    });
    const onUnrecoverable = opts.onUnrecoverable ?? (() => {});
    this.reaper = new SessionReaper({
      environment: name,
      client: this.client,
      ledger,
      budget: this.budget,
      gate: this.gate,
      log: opts.log,
      timeoutMs: this.reaperTimeoutMs,
      onUnrecoverable,
    });
    this.tracking = new SessionTracking({
      environment: name,
      ledger,
      client: this.client,
      reaper: this.reaper,
      log: opts.log,
      onUnrecoverable,
      // Journaled first: the session exists whether or not the ledger write succeeds.
      onCreated: (token, campaignId) => this.createdSessions.add(token, campaignId),
      ...(opts.lateAnswerGraceMs === undefined ? {} : { graceMs: opts.lateAnswerGraceMs }),
    });
    this.sessions = this.tracking;
  }

  get name(): string {
    return this.config.name;
  }

  /** The config section of `check` in this environment. */
  section(check: { name: string }): CheckConfigBase {
    return sectionOf(this.config, check);
  }

  /**
   * The deadline of one run of `check` in this environment: its timeout, but never less than one
   * request timeout plus a second, so a single request's own timeout fires before the deadline.
   */
  timeoutFor(check: { name: string }): number {
    return runDeadlineMs(this.section(check));
  }

  /** How long the cleanups of one run of `check` may take: one request, with some headroom. */
  cleanupTimeoutFor(check: { name: string }): number {
    return this.section(check).requestTimeoutMs + 5_000;
  }

  /**
   * The longest one run of `check` may be in flight from its instant: its deadline, then its
   * cleanups' (the runner waits for neither longer). The scheduler abandons a run that overstays
   * this (docs/architecture.md, "No environment goes silent").
   */
  runBoundFor(check: { name: string }): number {
    return this.timeoutFor(check) + this.cleanupTimeoutFor(check);
  }

  /**
   * How long one sweep of leftover sessions not tied to a run (a removed environment's) may take:
   * one close with the longest request timeout and its cleanup headroom. A sweep that meets it
   * stops, and the next sweep goes on. The sweep after a run has that check's bound (`sweepAfter`).
   */
  sweepTimeoutMs(): number {
    return this.reaperTimeoutMs + 5_000;
  }

  /**
   * Closes, after a run of `check`, what the ledger still lists for this process: each close with
   * the check's own request timeout, and the whole within its cleanup bound (`cleanupTimeoutFor`),
   * so a run's last cleanup never waits on another check's longer timeout (docs/configuration.md,
   * "The session ledger"). Never throws; returns how many sessions are still open.
   */
  async sweepAfter(check: { name: string }, signal?: AbortSignal): Promise<number> {
    const bound = AbortSignal.timeout(this.cleanupTimeoutFor(check));
    return this.reaper.sweep({
      force: true,
      signal: signal ? AbortSignal.any([signal, bound]) : bound,
      timeoutMs: this.section(check).requestTimeoutMs,
    });
  }

  intervalFor(check: { name: string }): number {
    return this.section(check).intervalMs;
  }

  enabled(check: { name: string }): boolean {
    return this.section(check).enabled;
  }

  /** False while the session ledger cannot be written (runs that create sessions are skipped). */
  ledgerWritable(): boolean {
    return this.opts.ledger.writable;
  }

  /**
   * Runs `check` once in this environment. Never throws. `startAt` (wall clock, ms): the instant
   * its first request goes out, when the run is set up ahead of it (see `RunOptions.startAt`);
   * `abandon`: the scheduler gives up on the run (see `RunOptions.abandon`).
   */
  run(
    check: AnyCheck,
    signal?: AbortSignal,
    startAt?: number,
    abandon?: AbortSignal,
  ): Promise<CheckResult> {
    const runNumber = this.runNumbers.get(check.name) ?? 0;
    this.runNumbers.set(check.name, runNumber + 1);
    return runCheck({
      check,
      environment: this.config,
      client: this.client,
      budget: this.budget,
      gate: this.gate,
      sessions: this.sessions,
      createdSessions: this.createdSessions,
      retained: this.retained,
      log: this.opts.log,
      runNumber,
      timeoutMs: this.timeoutFor(check),
      // Cleanups (e.g. closing a session) are single requests, with a little headroom.
      cleanupTimeoutMs: this.cleanupTimeoutFor(check),
      ...(signal ? { signal } : {}),
      ...(abandon ? { abandon } : {}),
      ...(startAt === undefined ? {} : { startAt }),
    });
  }

  async close(): Promise<void> {
    await this.tracking.settled();
    await this.client.close();
  }
}
