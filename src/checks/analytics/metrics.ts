/**
 * The analytics check's metric families and how one run's facts become their samples
 * (docs/metrics.md, "analytics").
 */
import { initialResults } from '../shared/request.js';
import { type CheckEnvironment, type MetricSink, type RunTimes } from '../../kernel/check.js';
import { ANALYTICS_RESULTS, type AnalyticsFacts } from './facts.js';
import type { AnalyticsConfig } from './config.js';

/** Sync durations: one page is tens of ms, a long sync paced by a 1/s budget tens of seconds. */
export const SYNC_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60] as const;

/** Ingest lag: seconds for a live pipeline, up to an hour for a stalled one. */
export const INGEST_LAG_BUCKETS = [5, 15, 30, 60, 120, 300, 600, 900, 1800, 3600] as const;

export const metrics = {
  analyticsRuns: {
    name: 'isa_analytics_runs_total',
    help: 'Finished analytics runs by result.',
    type: 'counter',
    labels: ['environment', 'result'],
    knownValues: { result: initialResults(ANALYTICS_RESULTS) },
  },
  syncPages: {
    name: 'isa_analytics_sync_pages_total',
    help: 'Pages of GET /analytics/sessions read by the incremental sync.',
    type: 'counter',
    labels: ['environment'],
  },
  syncRows: {
    name: 'isa_analytics_sync_rows_total',
    help: 'Session rows read by the incremental sync.',
    type: 'counter',
    labels: ['environment'],
  },
  syncDuration: {
    name: 'isa_analytics_sync_duration_seconds',
    help: 'Duration of each incremental sync, first page to last.',
    type: 'histogram',
    labels: ['environment'],
    buckets: SYNC_BUCKETS,
  },
  lastSyncSuccess: {
    name: 'isa_analytics_last_sync_success_timestamp_seconds',
    help: 'Unix time of the last successful incremental sync.',
    type: 'gauge',
    labels: ['environment'],
  },
  ingestLag: {
    name: 'isa_analytics_ingest_lag_seconds',
    help: 'Time from creating a synthetic session to its first appearance in GET /analytics/sessions/{id}.',
    type: 'histogram',
    labels: ['environment'],
    buckets: INGEST_LAG_BUCKETS,
  },
  sessionsLate: {
    name: 'isa_analytics_sessions_late_total',
    help: 'Synthetic sessions not in analytics within the configured ingest_lag_bound (counted once).',
    type: 'counter',
    labels: ['environment'],
  },
  sessionsMissing: {
    name: 'isa_analytics_sessions_missing_total',
    help: 'Synthetic sessions that never appeared in analytics within ingest_timeout.',
    type: 'counter',
    labels: ['environment'],
  },
  sessionsAwaiting: {
    name: 'isa_analytics_sessions_awaiting',
    help: 'Synthetic sessions created but not yet seen in analytics.',
    type: 'gauge',
    labels: ['environment'],
  },
  oldestAwaiting: {
    name: 'isa_analytics_oldest_awaiting_seconds',
    help: 'Age of the oldest synthetic session not yet seen in analytics (0 when none).',
    type: 'gauge',
    labels: ['environment'],
  },
  ingestLagBound: {
    name: 'isa_analytics_ingest_lag_bound_seconds',
    help: 'Configured ingest_lag_bound: a session later than this is counted late.',
    type: 'gauge',
    labels: ['environment'],
  },
} as const;

/** One run's facts as metrics. */
export function recordAnalytics(facts: AnalyticsFacts, sink: MetricSink, times: RunTimes): void {
  sink.inc(metrics.analyticsRuns, { result: facts.result });
  sink.inc(metrics.syncPages, {}, facts.pages);
  sink.inc(metrics.syncRows, {}, facts.rows);
  if (facts.syncDurationMs !== null) {
    sink.observe(metrics.syncDuration, {}, facts.syncDurationMs / 1000);
  }
  if (facts.syncSucceeded) sink.set(metrics.lastSyncSuccess, {}, times.finishedAt / 1000);
  for (const ms of facts.ingestLagsMs) sink.observe(metrics.ingestLag, {}, ms / 1000);
  sink.inc(metrics.sessionsLate, {}, facts.late);
  sink.inc(metrics.sessionsMissing, {}, facts.missing);
  sink.set(metrics.sessionsAwaiting, {}, facts.awaiting);
  sink.set(metrics.oldestAwaiting, {}, facts.oldestAwaitingMs / 1000);
}

/** The configured ingest-lag bound, as a gauge set at start-up. */
export function describeAnalytics(
  config: AnalyticsConfig,
  _environment: CheckEnvironment,
  sink: MetricSink,
): void {
  sink.set(metrics.ingestLagBound, {}, config.ingestLagBoundMs / 1000);
}
