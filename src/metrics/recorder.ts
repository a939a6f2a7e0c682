/**
 * The one place a check Result becomes metrics. Every label value written here comes from the
 * bounded vocabularies of `checks/results.ts`, the configured environment name, an HTTP status
 * code, or the API's numeric `service_data_set`; never URLs, tokens, addresses or messages.
 */
import type { CheckResult, LifecycleFacts, PingFacts } from '../checks/check.js';
import { PHASES, type CheckName, type Phase, type SkipReason } from '../checks/results.js';
import type { Metrics } from './registry.js';

/** Maps check Results and scheduler events to the metrics of a `Metrics` set. */
export class Recorder {
  /** The `service_data_set` currently exported per environment (only one series each). */
  private readonly dataSets = new Map<string, string>();

  constructor(private readonly metrics: Metrics) {}

  /** Records everything one finished check run tells: the universal and the check's own metrics. */
  recordResult(result: CheckResult): void {
    const m = this.metrics;
    const environment = result.environment;
    m.checkRuns.inc({ environment, check: result.check, outcome: result.outcome });
    m.checkDuration.observe({ environment, check: result.check }, seconds(result.durationMs));
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
    if (result.ping) this.recordPing(environment, result.startedAt, result.ping);
    if (result.lifecycle) {
      this.recordLifecycle(environment, result.startedAt + result.durationMs, result.lifecycle);
    }
  }

  /** Counts a scheduled run that did not happen (overlap, rate-limit back-off, request budget). */
  recordSkip(environment: string, check: CheckName, reason: SkipReason): void {
    this.metrics.checksSkipped.inc({ environment, check, reason });
  }

  /** Sets how many synthetic sessions of the environment are created and not yet seen closed. */
  setSessionsOpen(environment: string, count: number): void {
    this.metrics.syntheticSessionsOpen.set({ environment }, count);
  }

  private recordPing(environment: string, startedAtMs: number, ping: PingFacts): void {
    const m = this.metrics;
    m.pingAttempts.inc({ environment, result: ping.result });
    // Every attempt, timeouts included at their elapsed time: a hanging API is also a slow one.
    m.pingDuration.observe({ environment }, seconds(ping.durationMs));
    for (const [phase, ms] of phaseDurations(ping.phases)) {
      m.pingPhaseDuration.observe({ environment, phase }, seconds(ms));
    }
    m.pingLastDuration.set({ environment }, seconds(ping.durationMs));
    m.pingLastAttempt.set({ environment }, startedAtMs / 1000);
    m.pingUp.set({ environment }, ping.up ? 1 : 0);
  }

  private recordLifecycle(environment: string, finishedAtMs: number, facts: LifecycleFacts): void {
    const m = this.metrics;
    m.lifecycleRuns.inc({ environment, result: facts.result });
    for (const [step, ms] of Object.entries(facts.stepDurationsMs)) {
      if (isDuration(ms)) m.lifecycleStepDuration.observe({ environment, step }, seconds(ms));
    }
    if (facts.result === 'success') {
      // When the run finished: "no success for 15 minutes" should count from a completed run.
      m.lifecycleLastSuccess.set({ environment }, finishedAtMs / 1000);
    }
    if (facts.qualifyOutcome !== null) {
      m.qualifyOutcomes.inc({ environment, status: facts.qualifyOutcome });
    }
    for (const status of facts.pollStatuses) {
      m.qualifyPolls.inc({ environment, status });
    }
    if (isDuration(facts.qualifyDurationMs)) {
      m.qualifyDuration.observe({ environment }, seconds(facts.qualifyDurationMs));
    }
    if (facts.serviceDataSet !== null) this.setDataSet(environment, facts.serviceDataSet);
  }

  /** Keeps exactly one `isa_service_data_set_info` series per environment: the latest one. */
  private setDataSet(environment: string, value: string): void {
    const dataSet = dataSetLabel(value);
    const previous = this.dataSets.get(environment);
    if (previous === dataSet) return;
    if (previous !== undefined) {
      this.metrics.serviceDataSet.remove({ environment, service_data_set: previous });
    }
    this.metrics.serviceDataSet.set({ environment, service_data_set: dataSet }, 1);
    this.dataSets.set(environment, dataSet);
  }
}

function seconds(ms: number): number {
  return ms / 1000;
}

function isDuration(ms: number | null | undefined): ms is number {
  return typeof ms === 'number' && Number.isFinite(ms) && ms >= 0;
}

/**
 * The phases of a ping that were measured, in ms. Phases that did not happen (no name to resolve,
 * no TLS on http://, no response at all) are absent and are not observed (not observed as 0).
 */
function phaseDurations(phases: PingFacts['phases'] | undefined): Array<[Phase, number]> {
  if (phases === undefined || phases === null) return [];
  const present: Array<[Phase, number]> = [];
  for (const phase of PHASES) {
    const ms = phases[phase];
    if (isDuration(ms)) present.push([phase, ms]);
  }
  return present;
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

/**
 * `service_data_set` comes from the API, so it is checked before it becomes a label value: the
 * spec calls it a numeric string; anything else is exported as `invalid`.
 */
export function dataSetLabel(value: string): string {
  return /^\d{1,32}$/.test(value) ? value : 'invalid';
}
