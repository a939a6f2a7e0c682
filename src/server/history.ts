/**
 * The status page's history: per environment and check, a compact sample of every run over a time
 * window (by default 24 h of pings at the configured interval) and the last N runs in full, with
 * their steps (by default 100). Bounded by count, so memory is known in advance
 * (`bench/history.ts` measures it). `/api/status` keeps its own document; this one is served by
 * `/api/history`, filterable by environment and check and incremental by sequence number.
 */
import type { MaintenanceJson } from '../maintenance/watcher.js';
import {
  summaryKeysOf,
  type AnyCheck,
  type CheckResult,
  type Details,
  type PageView,
  type Summary,
} from '../kernel/check.js';
import { toCheckJson, type CheckJson } from './status.js';

export interface HistoryEnvironment {
  name: string;
  thresholds: { expectedMs: number; warningMs: number; criticalMs: number };
  /** Every registered check with its schedule; a disabled one keeps nothing. */
  checks: ReadonlyArray<{ name: string; enabled: boolean; intervalMs: number }>;
}

export interface RunHistoryOptions {
  /** The checks of this build, from the composition root: how the page presents each. */
  checks: readonly AnyCheck[];
  /** How far back samples reach; with the check's interval it sizes the sample ring. */
  windowMs: number;
  /** Full runs (with steps) kept per environment and check. */
  runs: number;
  environments: readonly HistoryEnvironment[];
  /** Wall clock in ms; injectable for tests. */
  now?: () => number;
  /** An environment's active or upcoming maintenance window (`maintenance/watcher.ts`). */
  maintenance?: (environment: string) => MaintenanceJson | null;
}

/** One run, compact: what the charts, the distributions and the failure list need. */
export interface HistorySample {
  seq: number;
  /** Unix ms when the run started. */
  t: number;
  outcome: 'pass' | 'fail';
  duration_ms: number;
  reason: string | null;
  summary: Summary;
  details: Details;
}

/** One run in full: the `check --json` document plus its sequence number and details. */
export type HistoryRun = CheckJson & { seq: number; details: Details };

export interface CheckHistoryJson {
  enabled: boolean;
  interval_ms: number;
  /** Most samples and runs this check keeps (a client merging increments trims to these). */
  capacity: { samples: number; runs: number };
  /** Oldest first. */
  samples: HistorySample[];
  /** Oldest first. */
  runs: HistoryRun[];
}

export interface HistoryDocument {
  generated_at: string;
  /** The newest sequence number; pass it back as `after` to get only what came since. */
  seq: number;
  window_ms: number;
  /** The registered checks in registry order, with how the page presents each. */
  checks: Array<{ name: string; summary_keys: readonly string[]; page: PageView }>;
  environments: Record<
    string,
    {
      thresholds_ms: { expected: number; warning: number; critical: number };
      /** Synthetic sessions created and not yet seen closed; null until first reported. */
      sessions_open: number | null;
      /** The active maintenance window, or the next within 24 hours; as in `/api/status`. */
      maintenance: MaintenanceJson | null;
      checks: Record<string, CheckHistoryJson>;
    }
  >;
}

export interface HistoryQuery {
  environment?: string;
  check?: string;
  /** Only entries with a larger sequence number. */
  after?: number;
  /** At most this many samples and runs per check (the newest). */
  limit?: number;
}

/** A fixed-capacity ring: pushing beyond capacity drops the oldest. */
class Ring<T> {
  private readonly items: T[] = [];
  private start = 0;
  constructor(readonly capacity: number) {}

  push(item: T): void {
    if (this.capacity === 0) return;
    if (this.items.length < this.capacity) this.items.push(item);
    else {
      this.items[this.start] = item;
      this.start = (this.start + 1) % this.capacity;
    }
  }

  /** Oldest first. */
  toArray(): T[] {
    return [...this.items.slice(this.start), ...this.items.slice(0, this.start)];
  }
}

interface CheckHistory {
  enabled: boolean;
  intervalMs: number;
  samples: Ring<HistorySample>;
  runs: Ring<{ seq: number; result: CheckResult }>;
}

interface EnvironmentHistory {
  thresholds: HistoryEnvironment['thresholds'];
  sessionsOpen: number | null;
  checks: Map<string, CheckHistory>;
}

/** Bounded in-memory history of every environment's check runs, for the status page. */
export class RunHistory {
  private readonly windowMs: number;
  /** Runs kept per check (`history.runs`). */
  private readonly runs: number;
  private readonly now: () => number;
  private readonly maintenance: (environment: string) => MaintenanceJson | null;
  private readonly environments = new Map<string, EnvironmentHistory>();
  private seq = 0;

  /** The checks of this build, and every check's summary keys (each run carries them all). */
  private readonly checks: readonly AnyCheck[];
  private readonly summaryKeys: readonly string[];

  constructor(opts: RunHistoryOptions) {
    this.checks = opts.checks;
    this.summaryKeys = summaryKeysOf(opts.checks);
    this.windowMs = opts.windowMs;
    this.now = opts.now ?? Date.now;
    this.maintenance = opts.maintenance ?? (() => null);
    this.runs = opts.runs;
    this.setEnvironments(opts.environments);
  }

  /**
   * The environments of the configuration (at start, and after a reload): a check whose schedule
   * is unchanged keeps its history; one enabled, disabled or given another interval starts
   * afresh, sized for its new interval; removed environments leave the document.
   */
  setEnvironments(environments: readonly HistoryEnvironment[]): void {
    const wanted = new Set(environments.map((env) => env.name));
    for (const name of this.environments.keys()) {
      if (!wanted.has(name)) this.environments.delete(name);
    }
    for (const env of environments) {
      const previous = this.environments.get(env.name);
      const checks = new Map<string, CheckHistory>();
      for (const check of env.checks) {
        const kept = previous?.checks.get(check.name);
        if (kept?.enabled === check.enabled && kept.intervalMs === check.intervalMs) {
          checks.set(check.name, kept);
          continue;
        }
        const samples = check.enabled ? sampleCapacity(this.windowMs, check.intervalMs) : 0;
        checks.set(check.name, {
          enabled: check.enabled,
          intervalMs: check.intervalMs,
          samples: new Ring(samples),
          runs: new Ring(check.enabled ? Math.max(0, Math.floor(this.runs)) : 0),
        });
      }
      this.environments.set(env.name, {
        thresholds: env.thresholds,
        sessionsOpen: previous?.sessionsOpen ?? null,
        checks,
      });
    }
  }

  /** Adds one finished run (of a configured environment and check; others are ignored). */
  add(result: CheckResult): void {
    const history = this.environments.get(result.environment)?.checks.get(result.check);
    if (history === undefined) return;
    const seq = ++this.seq;
    history.samples.push({
      seq,
      t: result.startedAt,
      outcome: result.outcome,
      duration_ms: round(result.durationMs),
      reason: result.reason,
      summary: result.summary,
      details: roundDetails(result.details ?? {}),
    });
    history.runs.push({ seq, result });
  }

  /** Records the environment's count of open synthetic sessions. */
  setSessionsOpen(environment: string, count: number): void {
    const env = this.environments.get(environment);
    if (env !== undefined) env.sessionsOpen = count;
  }

  /** True when `environment` is configured. */
  /** Whether `check` is a check of this build. */
  hasCheck(check: string): boolean {
    return this.checks.some((known) => known.name === check);
  }

  hasEnvironment(environment: string): boolean {
    return this.environments.has(environment);
  }

  /** The `/api/history` document, filtered; a copy, safe to serialise while runs arrive. */
  document(query: HistoryQuery = {}): HistoryDocument {
    const oldest = this.now() - this.windowMs;
    const after = query.after ?? 0;
    const environments: HistoryDocument['environments'] = {};
    for (const [name, env] of this.environments) {
      if (query.environment !== undefined && query.environment !== name) continue;
      const checks: Record<string, CheckHistoryJson> = {};
      for (const [check, history] of env.checks) {
        if (query.check !== undefined && query.check !== check) continue;
        const samples = history.samples.toArray().filter((s) => s.seq > after && s.t >= oldest);
        const runs = history.runs.toArray().filter((r) => r.seq > after);
        checks[check] = {
          enabled: history.enabled,
          interval_ms: history.intervalMs,
          capacity: { samples: history.samples.capacity, runs: history.runs.capacity },
          samples: newest(samples, query.limit),
          runs: newest(runs, query.limit).map(({ seq, result }) => ({
            seq,
            ...toCheckJson(result, this.summaryKeys),
            details: roundDetails(result.details ?? {}),
          })),
        };
      }
      environments[name] = {
        thresholds_ms: {
          expected: env.thresholds.expectedMs,
          warning: env.thresholds.warningMs,
          critical: env.thresholds.criticalMs,
        },
        sessions_open: env.sessionsOpen,
        maintenance: this.maintenance(name),
        checks,
      };
    }
    return {
      generated_at: new Date(this.now()).toISOString(),
      seq: this.seq,
      window_ms: this.windowMs,
      checks: this.checks
        .filter((check) => query.check === undefined || query.check === check.name)
        .map((check) => ({
          name: check.name,
          summary_keys: check.summaryKeys,
          page: check.page ?? {},
        })),
      environments,
    };
  }
}

/** Samples kept for `windowMs` of runs every `intervalMs` (at least one). */
export function sampleCapacity(windowMs: number, intervalMs: number): number {
  if (!(intervalMs > 0) || !(windowMs > 0)) return 1;
  return Math.max(1, Math.ceil(windowMs / intervalMs));
}

function newest<T>(items: T[], limit: number | undefined): T[] {
  return limit === undefined || items.length <= limit ? items : items.slice(items.length - limit);
}

/** Microseconds are noise on a status page and cost bytes on every refresh. */
function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}

function roundDetails(details: Details): Details {
  const out: Record<string, number | null> = {};
  for (const [key, value] of Object.entries(details)) {
    out[key] = typeof value === 'number' && Number.isFinite(value) ? round(value) : null;
  }
  return out;
}
