/**
 * The lifecycle check's metric families and how one run's facts become their samples
 * (docs/metrics.md, "lifecycle").
 */
import { initialResults } from '../shared/request.js';
import { QUALIFY_STATUSES } from '../../api/schemas.js';
import { type RunTimes } from '../../kernel/check.js';
import type { MetricSink } from '../../kernel/check.js';
import { LIFECYCLE_RESULTS, LIFECYCLE_STEPS, QUALIFY_OUTCOMES, LifecycleFacts } from './facts.js';

/** Every qualify_status a poll can see: the API's own set. */
export const POLL_STATUSES = QUALIFY_STATUSES;

/** Time to qualify: typical 20–30 s, early warning at 45 s, give-up at 90 s. */
export const QUALIFY_BUCKETS = [1, 2, 5, 10, 15, 20, 25, 30, 45, 60, 75, 90, 120] as const;

/** Lifecycle step durations: a poll step spans the whole polling loop, up to 90 s. */
export const STEP_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 90, 120] as const;

export const metrics = {
  lifecycleRuns: {
    name: 'isa_lifecycle_runs_total',
    help: 'Finished synthetic session lifecycle runs by result.',
    type: 'counter',
    labels: ['environment', 'result'],
    knownValues: { result: initialResults(LIFECYCLE_RESULTS) },
  },
  lifecycleStepDuration: {
    name: 'isa_lifecycle_step_duration_seconds',
    help: 'Duration of each lifecycle step; poll spans the whole polling loop.',
    type: 'histogram',
    labels: ['environment', 'step'],
    knownValues: { step: LIFECYCLE_STEPS },
    buckets: STEP_BUCKETS,
  },
  lifecycleLastSuccess: {
    name: 'isa_lifecycle_last_success_timestamp_seconds',
    help: 'Unix time of the last successful lifecycle run.',
    type: 'gauge',
    labels: ['environment'],
  },
  qualifyOutcomes: {
    name: 'isa_qualify_outcomes_total',
    help: 'Final qualify status of each lifecycle run; timeout means unknown, not no-service.',
    type: 'counter',
    labels: ['environment', 'status'],
    knownValues: { status: QUALIFY_OUTCOMES },
  },
  qualifyPolls: {
    name: 'isa_qualify_polls_total',
    help: 'qualify_status of every creation and poll response.',
    type: 'counter',
    labels: ['environment', 'status'],
    knownValues: { status: POLL_STATUSES },
  },
  qualifyDuration: {
    name: 'isa_qualify_duration_seconds',
    help: 'Time from session creation to the final qualify status.',
    type: 'histogram',
    labels: ['environment'],
    buckets: QUALIFY_BUCKETS,
  },
  serviceDataSet: {
    name: 'isa_service_data_set_info',
    help: 'The service_data_set behind the latest offerings (value 1).',
    type: 'gauge',
    labels: ['environment', 'service_data_set'],
  },
} as const;

export function recordLifecycle(facts: LifecycleFacts, sink: MetricSink, times: RunTimes): void {
  sink.inc(metrics.lifecycleRuns, { result: facts.result });
  for (const [step, ms] of Object.entries(facts.stepDurationsMs)) {
    if (isDuration(ms)) sink.observe(metrics.lifecycleStepDuration, { step }, ms / 1000);
  }
  if (facts.result === 'success') {
    // When the run finished: "no success for 15 minutes" should count from a completed run.
    sink.set(metrics.lifecycleLastSuccess, {}, times.finishedAt / 1000);
  }
  if (facts.qualifyOutcome !== null) {
    sink.inc(metrics.qualifyOutcomes, { status: facts.qualifyOutcome });
  }
  for (const status of facts.pollStatuses) sink.inc(metrics.qualifyPolls, { status });
  if (isDuration(facts.qualifyDurationMs)) {
    sink.observe(metrics.qualifyDuration, {}, facts.qualifyDurationMs / 1000);
  }
  if (facts.serviceDataSet !== null) {
    // Exactly one series per environment: the latest data set.
    sink.setOnly(
      metrics.serviceDataSet,
      { service_data_set: dataSetLabel(facts.serviceDataSet) },
      1,
    );
  }
}

function isDuration(ms: number | null | undefined): ms is number {
  return typeof ms === 'number' && Number.isFinite(ms) && ms >= 0;
}

/**
 * `service_data_set` comes from the API, so it is checked before it becomes a label value: the
 * spec calls it a numeric string; anything else is exported as `invalid`.
 */
export function dataSetLabel(value: string): string {
  return /^\d{1,32}$/.test(value) ? value : 'invalid';
}
