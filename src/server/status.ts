/**
 * The status history behind `/api/status`: per environment and check, the latest run and a bounded
 * list of recent runs with their steps, in the shape of `check --json`. Failures are kept longer
 * than successes (more of them, for longer), because the failures are what on-call comes to read.
 */
import { summaryKeysOf, type AnyCheck, type CheckResult } from '../kernel/check.js';
import type { MaintenanceJson } from '../maintenance/watcher.js';
import type { DriftReport } from '../drift/report.js';

/** One step of a run as `check --json` and `/api/status` print it. */
export interface CheckStepJson {
  name: string;
  method: string | null;
  path: string | null;
  status_code: number | null;
  duration_ms: number;
  request_id: string | null;
  error: string | null;
}

/**
 * The `check --json` document of one run (docs/cli.md): the common fields, plus every registered
 * check's summary keys (`latency_class`, `qualify_status`, ...), null where the check has none.
 */
export interface CheckJson {
  check: string;
  environment: string;
  outcome: 'pass' | 'fail';
  reason: string | null;
  [summaryKey: string]: unknown;
  duration_ms: number;
  /** ISO 8601 time the run started (null only if the Result carried no valid time). */
  started_at: string | null;
  steps: CheckStepJson[];
  contract_checks: Array<{ check: string; result: string; detail: string | null }>;
}

export interface CheckStatus {
  /** The newest run, whatever its outcome; null before the first run. */
  last: CheckJson | null;
  /** Kept runs, newest first: the last successes and the (longer kept) last failures. */
  runs: CheckJson[];
}

/** The `/api/status` document. */
export interface StatusDocument {
  generated_at: string;
  environments: Record<string, Record<string, CheckStatus>>;
  /**
   * Per environment of `environments`: its active maintenance window, or the next one starting
   * within 24 hours, or null (docs/metrics.md, "/api/status").
   */
  maintenance: Record<string, MaintenanceJson | null>;
  /**
   * Contract drift (docs/drift.md, "The drift document"): the measurement engine's newest
   * document, null before its first.
   */
  contract_drift: DriftReport | null;
}

/** Most runs per environment and check one `/api/status` answer carries: everything kept. */
export const MAX_STATUS_LIMIT = 60;
/** Runs per environment and check when the query names no `limit`. */
export const DEFAULT_STATUS_LIMIT = 10;

/** What one `/api/status` answer covers; every field narrows it. */
export interface StatusQuery {
  environment?: string;
  check?: string;
  /** Only runs of this outcome in `runs` (`last` stays the newest run). */
  outcome?: 'pass' | 'fail';
  /** At most this many runs per environment and check, the newest; default `DEFAULT_STATUS_LIMIT`. */
  limit?: number;
}

export interface StatusHistoryOptions {
  /** The checks of this build, from the composition root: their names and summary keys. */
  checks: readonly AnyCheck[];
  /** Successful runs kept per environment and check; default 10. */
  successesPerCheck?: number;
  /** Failed runs kept per environment and check; default 50. */
  failuresPerCheck?: number;
  /** Failed runs older than this are dropped; default 24 hours. */
  failureMaxAgeMs?: number;
  /** Environments listed (with `last: null`) before their first run. */
  environments?: readonly string[];
  /** Wall clock in ms; injectable for tests. */
  now?: () => number;
  /** An environment's active or upcoming maintenance window; none without it. */
  maintenance?: (environment: string) => MaintenanceJson | null;
}

interface History {
  last: CheckResult | null;
  /** Newest first. */
  successes: CheckResult[];
  /** Newest first. */
  failures: CheckResult[];
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** Bounded in-memory history of check runs per environment and check. */
export class StatusHistory {
  private readonly successesPerCheck: number;
  private readonly failuresPerCheck: number;
  private readonly failureMaxAgeMs: number;
  private readonly now: () => number;
  private readonly maintenance: (environment: string) => MaintenanceJson | null;
  /** environment → check → history; insertion order is the order of the document. */
  private readonly histories = new Map<string, Map<string, History>>();
  private contractDrift: DriftReport | null = null;

  /** Every check's summary keys: each run's document carries them all. */
  private readonly summaryKeys: readonly string[];
  private readonly checkNames: ReadonlySet<string>;

  constructor(opts: StatusHistoryOptions) {
    this.summaryKeys = summaryKeysOf(opts.checks);
    this.checkNames = new Set(opts.checks.map((check) => check.name));
    this.successesPerCheck = nonNegative(opts.successesPerCheck ?? 10);
    this.failuresPerCheck = nonNegative(opts.failuresPerCheck ?? 50);
    this.failureMaxAgeMs = opts.failureMaxAgeMs ?? DAY_MS;
    this.now = opts.now ?? Date.now;
    this.maintenance = opts.maintenance ?? (() => null);
    for (const environment of opts.environments ?? []) {
      for (const check of this.checkNames) this.history(environment, check);
    }
  }

  /**
   * The environments of a reloaded configuration: new ones are listed before their first run,
   * removed ones leave the document, and the others keep their history.
   */
  setEnvironments(environments: readonly string[]): void {
    const wanted = new Set(environments);
    for (const environment of this.histories.keys()) {
      if (!wanted.has(environment)) this.histories.delete(environment);
    }
    for (const environment of environments) {
      for (const check of this.checkNames) this.history(environment, check);
    }
  }

  /** Adds one finished run. */
  add(result: CheckResult): void {
    const history = this.history(result.environment, result.check);
    history.last = result;
    if (result.outcome === 'pass') {
      history.successes.unshift(result);
      history.successes.length = Math.min(history.successes.length, this.successesPerCheck);
    } else {
      history.failures.unshift(result);
      history.failures.length = Math.min(history.failures.length, this.failuresPerCheck);
    }
    this.dropOldFailures(history);
  }

  /** Whether `environment` is listed (configured, or has had a run). */
  /** Whether `check` is a check of this build. */
  hasCheck(check: string): boolean {
    return this.checkNames.has(check);
  }

  hasEnvironment(environment: string): boolean {
    return this.histories.has(environment);
  }

  /**
   * The `/api/status` document, narrowed by `query`: a copy, safe to serialise while runs keep
   * arriving. Only the selected histories are read, so one environment's answer costs the same
   * at 1000 environments as at one.
   */
  snapshot(query: StatusQuery = {}): StatusDocument {
    const limit = query.limit ?? DEFAULT_STATUS_LIMIT;
    const environments: StatusDocument['environments'] = {};
    const maintenance: StatusDocument['maintenance'] = {};
    const selected =
      query.environment === undefined
        ? this.histories
        : new Map([[query.environment, this.histories.get(query.environment) ?? new Map()]]);
    for (const [environment, checks] of selected) {
      const byCheck: Record<string, CheckStatus> = {};
      for (const [check, history] of checks) {
        if (query.check !== undefined && check !== query.check) continue;
        this.dropOldFailures(history);
        const kept =
          query.outcome === 'pass'
            ? history.successes
            : query.outcome === 'fail'
              ? history.failures
              : [...history.successes, ...history.failures];
        const runs = [...kept].sort((a, b) => b.startedAt - a.startedAt).slice(0, limit);
        byCheck[check] = {
          last: history.last === null ? null : toCheckJson(history.last, this.summaryKeys),
          runs: runs.map((run) => toCheckJson(run, this.summaryKeys)),
        };
      }
      environments[environment] = byCheck;
      maintenance[environment] = this.maintenance(environment);
    }
    return {
      generated_at: new Date(this.now()).toISOString(),
      environments,
      maintenance,
      contract_drift: this.contractDrift,
    };
  }

  /** The newest drift document (`/api/drift`), null before the engine sent one. */
  contractDriftDocument(): DriftReport | null {
    return this.contractDrift;
  }

  /** The measurement engine's newest drift document. */
  setContractDrift(report: DriftReport): void {
    this.contractDrift = report;
  }

  private history(environment: string, check: string): History {
    let checks = this.histories.get(environment);
    if (checks === undefined) {
      checks = new Map();
      this.histories.set(environment, checks);
    }
    let history = checks.get(check);
    if (history === undefined) {
      history = { last: null, successes: [], failures: [] };
      checks.set(check, history);
    }
    return history;
  }

  private dropOldFailures(history: History): void {
    const oldest = this.now() - this.failureMaxAgeMs;
    if (history.failures.some((run) => run.startedAt < oldest)) {
      history.failures = history.failures.filter((run) => run.startedAt >= oldest);
    }
  }
}

/**
 * The contract's `check --json` document of one run (snake_case keys; no API keys anywhere), with
 * every key of `summaryKeys` (`summaryKeysOf` the build's checks), null where the run has none.
 */
export function toCheckJson(result: CheckResult, summaryKeys: readonly string[]): CheckJson {
  return {
    check: result.check,
    environment: result.environment,
    outcome: result.outcome,
    reason: result.reason,
    ...Object.fromEntries(summaryKeys.map((key) => [key, result.summary[key] ?? null])),
    duration_ms: result.durationMs,
    started_at: isoTime(result.startedAt),
    steps: result.steps.map((step) => ({
      name: step.name,
      method: step.method,
      path: step.path,
      status_code: step.statusCode,
      duration_ms: step.durationMs,
      request_id: step.requestId,
      error: step.error,
    })),
    contract_checks: result.contractChecks.map((c) => ({
      check: c.check,
      result: c.result,
      detail: c.detail ?? null,
    })),
  };
}

function isoTime(ms: number): string | null {
  // toISOString throws on an invalid date; a status page must not.
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
}

function nonNegative(n: number): number {
  return Number.isFinite(n) && n > 0 ? Math.floor(n) : 0;
}
