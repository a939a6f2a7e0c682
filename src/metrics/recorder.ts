/**
 * The one place a check Result becomes metrics. The universal metrics (runs, durations, responses,
 * contract checks, skips) are written here; each check writes its own through a `MetricSink` that
 * adds the `environment` label and accepts only the check's declared metrics. Every label value
 * comes from the bounded vocabularies (`vocabulary.ts` and each check's own sets), the configured
 * environment name, an HTTP status code, or a value a check has checked (e.g. a numeric
 * `service_data_set`); never URLs, tokens, addresses or messages.
 */
import type { DriftReport } from '../drift/report.js';
import type { Counter, Gauge, Histogram } from 'prom-client';
import type { AnyCheck, CheckResult, FollowUpEvent, MetricSink } from '../kernel/check.js';
import { sectionOf, type EnvironmentConfig } from '../config/index.js';
import { checkEnvironmentOf } from '../config/section.js';
import type { SkipReason } from '../kernel/vocabulary.js';
import { CONTROL_METRICS, type ControlResult } from './definitions.js';
import type { MetricDefinition } from '../kernel/metric-definition.js';
import { handleOf, knownLabelSets, type Metrics } from './registry.js';

type Handle = Counter<string> | Gauge<string> | Histogram<string>;

/** Maps check Results and scheduler events to the metrics of a `Metrics` set. */
export class Recorder {
  /** Per check, its metric handles by metric name: what its sink may write. */
  private readonly handles = new Map<string, Map<string, Handle>>();
  /** The one series `setOnly` keeps, per environment and metric name. */
  private readonly only = new Map<string, Record<string, string>>();

  /** The checks of the catalog the metrics were made from, by name. */
  private readonly checks: ReadonlyMap<string, AnyCheck>;

  constructor(private readonly metrics: Metrics) {
    this.checks = new Map(metrics.catalog.checks.map((check) => [check.name, check]));
    this.bind();
  }

  /**
   * Takes the metric handles afresh: after a reload made a histogram anew
   * (`metrics/reconfigure.ts`), its checks' sinks write to the new one.
   */
  bind(): void {
    const metrics = this.metrics;
    for (const check of metrics.catalog.checks) {
      const own = new Map<string, Handle>();
      for (const [key, def] of Object.entries(check.metrics)) {
        const handle = handleOf(metrics, key);
        if (handle === undefined) throw new Error(`internal: no handle for metric ${def.name}`);
        own.set(def.name, handle);
      }
      this.handles.set(check.name, own);
    }
  }

  /** Sets the configuration gauges of the checks enabled in `environment` (at start-up). */
  describeEnvironment(environment: EnvironmentConfig): void {
    const shared = checkEnvironmentOf(environment);
    for (const check of this.metrics.catalog.checks) {
      const config = sectionOf(environment, check);
      if (!config.enabled) continue;
      const sink = this.sink(check, environment.name);
      check.describeConfig?.(config, shared, sink);
      const followUp = check.followUp;
      if (followUp === undefined || followUp.policy(config) === null) continue;
      // The follow-up families exist, from 0, only where follow-up runs are on.
      const own = this.handles.get(check.name);
      for (const def of followUp.metrics) {
        const handle = own?.get(def.name);
        if (def.type === 'gauge' || handle === undefined) continue;
        for (const labels of knownLabelSets(def, [environment.name])) {
          if (def.type === 'histogram') (handle as Histogram<string>).zero(labels);
          else (handle as Counter<string>).inc(labels, 0);
        }
      }
      followUp.describe?.(sink);
    }
  }

  /**
   * Records everything one finished check run tells: the universal and the check's own metrics.
   * A follow-up run (`result.followUp`, e.g. a confirmation ping) writes only the check's
   * follow-up metrics: the series of scheduled runs keep counting scheduled runs.
   */
  recordResult(result: CheckResult): void {
    const m = this.metrics;
    const environment = result.environment;
    if (result.followUp === true) {
      const check = this.checks.get(result.check);
      if (check?.followUp === undefined || result.facts === null) return;
      check.followUp.record(result.facts, this.sink(check, environment), runTimes(result));
      return;
    }
    const check = this.checks.get(result.check);
    // A check whose own metrics count and time its runs (the ping) has no series of these two.
    if (check?.ownRunMetrics !== true) {
      m.checkRuns.inc({ environment, check: result.check, outcome: result.outcome });
      m.checkDuration.observe({ environment, check: result.check }, result.durationMs / 1000);
    }
    if (result.budgetWaitMs !== undefined && result.budgetWaitMs > 0) {
      m.requestBudgetWait.inc({ environment, check: result.check }, result.budgetWaitMs / 1000);
    }
    for (const response of result.responses) {
      m.httpResponses.inc({
        environment,
        operation: response.operation,
        code: statusCodeLabel(response.code),
      });
    }
    for (const contract of result.contractChecks) {
      m.contractChecks.inc({ environment, check: contract.check, result: contract.result });
    }
    if (check === undefined || result.facts === null) return;
    check.record(result.facts, this.sink(check, environment), runTimes(result));
  }

  /** Records the start or end of a check's follow-up sequence (e.g. confirmation pings). */
  recordFollowUp(environment: string, check: string, event: FollowUpEvent): void {
    const found = this.checks.get(check);
    if (found?.followUp === undefined) return;
    found.followUp.recordSequence(event, this.sink(found, environment));
  }

  /** Records one control probe (`control`): its result and its duration. */
  recordControlProbe(result: ControlResult, durationMs: number): void {
    this.metrics.controlProbeAttempts.inc({ result });
    this.metrics.controlProbeDuration.observe(durationMs / 1000);
    const success = this.metrics.controlProbeSuccess;
    // Registered at the first probe, so that it is absent until there was one (see registry.ts).
    if (
      this.metrics.registry.getSingleMetric(CONTROL_METRICS.controlProbeSuccess.name) === undefined
    )
      this.metrics.registry.registerMetric(success);
    success.set(result === 'ok' ? 1 : 0);
  }

  /** Counts a scheduled run that did not happen (overlap, rate-limit back-off, request budget). */
  recordSkip(environment: string, check: string, reason: SkipReason): void {
    this.metrics.checksSkipped.inc({ environment, check, reason });
  }

  /** Counts a run the scheduler abandoned (docs/architecture.md, "No environment goes silent"). */
  recordAbandoned(environment: string, check: string): void {
    this.metrics.checkRunsAbandoned.inc({ environment, check });
  }

  /** Observes the measurement thread's event-loop lag samples (ms late). */
  recordMeasurementLag(samplesMs: readonly number[]): void {
    for (const ms of samplesMs) this.metrics.measurementLag.observe(ms / 1000);
  }

  /** Counts synthetic sessions reported unrecoverable: created, but their token never arrived. */
  recordUnrecoverable(environment: string, count = 1): void {
    this.metrics.syntheticSessionsUnrecoverable.inc({ environment }, count);
  }

  /** Whether `environment` is inside a maintenance window (`isa_maintenance_active`). */
  setMaintenanceActive(environment: string, active: boolean): void {
    this.metrics.maintenanceActive.set({ environment }, active ? 1 : 0);
  }

  /**
   * The open differences of every operation of the drift document
   * (`isa_contract_drift_differences`): the family is set anew, so an operation or an environment
   * the document no longer holds leaves it.
   */
  setContractDrift(report: Pick<DriftReport, 'environments'>): void {
    const gauge = this.metrics.contractDriftDifferences;
    gauge.reset();
    for (const [environment, { operations }] of Object.entries(report.environments)) {
      for (const [operation, { counts }] of Object.entries(operations)) {
        for (const [severity, count] of Object.entries(counts)) {
          gauge.set({ environment, operation, severity }, count);
        }
      }
    }
  }

  /** One series of `isa_contract_drift_differences` (the rules' tests set them one by one). */
  setContractDriftDifferences(
    environment: string,
    operation: string,
    severity: string,
    count: number,
  ): void {
    this.metrics.contractDriftDifferences.set({ environment, operation, severity }, count);
  }

  /** Whether the session ledger can be written (`isa_session_ledger_writable`). */
  setLedgerWritable(writable: boolean): void {
    this.metrics.sessionLedgerWritable.set(writable ? 1 : 0);
  }

  /**
   * Sets how many synthetic sessions of the environment are created and not yet seen closed. The
   * engine reports this at start-up for every environment that can have sessions, including one
   * without a check that creates them whose sessions or create intents the ledger still held (an
   * earlier configuration's): both session families then exist there, from 0, before its
   * leftovers are closed or reported unrecoverable.
   */
  setSessionsOpen(environment: string, count: number): void {
    this.metrics.syntheticSessionsOpen.set({ environment }, count);
    this.metrics.syntheticSessionsUnrecoverable.inc({ environment }, 0);
  }

  /**
   * Drops the open-session series of an environment no longer configured once the ledger holds
   * none of its sessions (until then `setSessionsOpen` keeps it, for `IsaSyntheticSessionsLeaking`).
   */
  forgetSessionsOpen(environment: string): void {
    this.metrics.syntheticSessionsOpen.remove({ environment });
  }

  /** The sink `check` writes its metrics of `environment` through. */
  private sink(check: AnyCheck, environment: string): MetricSink {
    const own = this.handles.get(check.name);
    const handle = (def: MetricDefinition): Handle => {
      const found = own?.get(def.name);
      if (found === undefined) {
        throw new Error(`check ${check.name} writes ${def.name}, which it does not declare`);
      }
      return found;
    };
    const withEnvironment = (labels: object) => ({ ...labels, environment });
    return {
      inc: (def, labels, value = 1) =>
        (handle(def) as Counter<string>).inc(withEnvironment(labels), value),
      set: (def, labels, value) =>
        (handle(def) as Gauge<string>).set(withEnvironment(labels), value),
      observe: (def, labels, value) =>
        (handle(def) as Histogram<string>).observe(withEnvironment(labels), value),
      setOnly: (def, labels, value) => {
        const gauge = handle(def) as Gauge<string>;
        const key = `${environment}\u0000${def.name}`;
        const next = withEnvironment(labels);
        const previous = this.only.get(key);
        if (previous !== undefined && !sameLabels(previous, next)) gauge.remove(previous);
        gauge.set(next, value);
        this.only.set(key, next);
      },
    };
  }
}

/** When a run started and ended (its duration leaves out its budget waits; its span does not). */
function runTimes(result: CheckResult): { startedAt: number; finishedAt: number } {
  const budgetWaitMs = result.budgetWaitMs ?? 0;
  return {
    startedAt: result.startedAt,
    finishedAt: result.startedAt + budgetWaitMs + result.durationMs,
  };
}

function sameLabels(a: Record<string, string>, b: Record<string, string>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => a[k] === b[k]);
}

/**
 * An HTTP status code as a label value. Codes are bounded by HTTP itself (100–599), so an
 * unexpected one such as 418 is exported as is; anything that is not a three-digit status is
 * `none` if it says so, else `other`, so a bug can never put free text into a label.
 */
export function statusCodeLabel(code: string): string {
  if (/^[1-5]\d\d$/.test(code) || code === 'none') return code;
  return 'other';
}
