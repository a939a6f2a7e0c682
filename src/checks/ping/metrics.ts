/**
 * The ping check's metric families and how one ping's facts and configuration become their
 * samples (docs/metrics.md, "ping").
 */
import { PHASES } from '../../kernel/vocabulary.js';
import {
  FOLLOW_UP_ENDS,
  type CheckEnvironment,
  type MetricSink,
  type RunTimes,
} from '../../kernel/check.js';
import { THRESHOLD_LEVELS } from '../../kernel/latency.js';
import { initialResults } from '../shared/request.js';
import { CONFIRM_TRIGGER_RESULTS, PING_RESULTS, phaseDurations, type PingFacts } from './facts.js';
import type { PingConfig } from './config.js';

/**
 * The ping histogram's fixed bounds, a coarse ladder: exactly at the API's 0.1/0.5/1 s guidance
 * (the default thresholds) and past the default 10 s timeout. The configuration adds the rest
 * (`configuredBounds`): every configured threshold, exactly, so the rules judge it at its own
 * bound; and a bound at twice the ping timeout where 30 s is not that far.
 */
export const PING_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 30] as const;

/**
 * Phase buckets: none but `+Inf`. The phase histogram is five series per environment, and what
 * every dashboard, runbook and rule reads from it is each phase's mean (`_sum` / `_count`); its
 * finite buckets were a third of a ping-only environment's samples. A slow-ping count or a
 * quantile comes from `isa_ping_duration_seconds`. It stays a histogram (docs/metrics.md), so a
 * bucket can come back without renaming anything.
 */
export const PHASE_BUCKETS = [] as const;

export const metrics = {
  pingAttempts: {
    name: 'isa_ping_attempts_total',
    help: 'Ping attempts by result.',
    type: 'counter',
    labels: ['environment', 'result'],
    knownValues: { result: initialResults(PING_RESULTS) },
  },
  pingDuration: {
    name: 'isa_ping_duration_seconds',
    help: 'Duration of every ping attempt; timeouts are observed at their elapsed time.',
    type: 'histogram',
    labels: ['environment'],
    buckets: PING_BUCKETS,
    configuredBounds: { thresholds: true, pastTimeout: true },
  },
  pingPhaseDuration: {
    name: 'isa_ping_phase_duration_seconds',
    help: 'Ping duration split into phases: resolve, connect, tls, processing (time to first byte), transfer.',
    type: 'histogram',
    labels: ['environment', 'phase'],
    knownValues: { phase: PHASES },
    // `resolve` starts at 0 only where the base URL's host is a name (vocabulary.ts).
    environmentScoped: { phase: 'phases' },
    buckets: PHASE_BUCKETS,
  },
  pingLastDuration: {
    name: 'isa_ping_last_duration_seconds',
    help: 'Duration of the last ping attempt.',
    type: 'gauge',
    labels: ['environment'],
  },
  pingLastAttempt: {
    name: 'isa_ping_last_attempt_timestamp_seconds',
    help: 'Unix time of the last ping attempt.',
    type: 'gauge',
    labels: ['environment'],
  },
  pingUp: {
    name: 'isa_ping_up',
    help: '1 if the last ping got a valid 200 {message, timestamp}, else 0.',
    type: 'gauge',
    labels: ['environment'],
  },
  latencyThreshold: {
    name: 'isa_latency_threshold_seconds',
    help: 'Configured ping latency thresholds.',
    type: 'gauge',
    labels: ['environment', 'level'],
    knownValues: { level: THRESHOLD_LEVELS },
  },
  pingConnectionsOpened: {
    name: 'isa_ping_connections_opened_total',
    help: 'Pings that opened a new connection (their connect and TLS phases were measured).',
    type: 'counter',
    labels: ['environment'],
  },
  pingInterval: {
    name: 'isa_ping_interval_seconds',
    help: 'Configured ping interval, for expected-count denominators in rules.',
    type: 'gauge',
    labels: ['environment'],
  },
  // Confirmation pings: a family of their own, so every query of the scheduled ones is unchanged.
  pingConfirmAttempts: {
    name: 'isa_ping_confirm_attempts_total',
    help: 'Confirmation ping attempts (pings a slow or failed scheduled ping started) by result.',
    type: 'counter',
    labels: ['environment', 'result'],
    knownValues: { result: initialResults(PING_RESULTS) },
    // From 0 only the results the rules read: `ok` and those that say "down". A confirmation
    // ping answered 401, 429, another status or a bad body appears under that result when first
    // seen (scheduled pings count those from 0, in isa_ping_attempts_total): four more zero
    // series in every environment were 0.32 MB of /metrics at 1000 (bench/README.md).
    startAtZero: { result: ['ok', ...CONFIRM_TRIGGER_RESULTS] },
  },
  pingConfirmDuration: {
    name: 'isa_ping_confirm_duration_seconds',
    help: 'Duration of every confirmation ping; timeouts are observed at their elapsed time.',
    type: 'histogram',
    labels: ['environment'],
    buckets: PING_BUCKETS,
    // The rules read one bound of it: the configured critical threshold, exactly (and +Inf).
    thresholdBuckets: 'critical',
  },
  pingConfirmSequences: {
    name: 'isa_ping_confirm_sequences_total',
    help: 'Ended confirmation sequences by how they ended: recovered, window_elapsed or stopped.',
    type: 'counter',
    labels: ['environment', 'end'],
    knownValues: { end: FOLLOW_UP_ENDS },
  },
  pingConfirmActive: {
    name: 'isa_ping_confirm_active',
    help: '1 while a confirmation sequence runs, else 0.',
    type: 'gauge',
    labels: ['environment'],
  },
} as const;

export function seconds(ms: number): number {
  return ms / 1000;
}

/** One scheduled ping's facts as metrics. */
export function recordPing(facts: PingFacts, sink: MetricSink, times: RunTimes): void {
  sink.inc(metrics.pingAttempts, { result: facts.result });
  // Every attempt, timeouts included at their elapsed time: a hanging API is also a slow one.
  sink.observe(metrics.pingDuration, {}, seconds(facts.durationMs));
  for (const [phase, ms] of phaseDurations(facts.phases)) {
    sink.observe(metrics.pingPhaseDuration, { phase }, seconds(ms));
  }
  sink.set(metrics.pingLastDuration, {}, seconds(facts.durationMs));
  sink.set(metrics.pingLastAttempt, {}, times.startedAt / 1000);
  sink.set(metrics.pingUp, {}, facts.up ? 1 : 0);
  if (facts.connectionOpened) sink.inc(metrics.pingConnectionsOpened, {});
}

/** The configured thresholds and interval, as gauges set at start-up. */
export function describePing(
  config: PingConfig,
  environment: CheckEnvironment,
  sink: MetricSink,
): void {
  const t = environment.thresholds;
  sink.set(metrics.latencyThreshold, { level: 'expected' }, t.expectedMs / 1000);
  sink.set(metrics.latencyThreshold, { level: 'warning' }, t.warningMs / 1000);
  sink.set(metrics.latencyThreshold, { level: 'critical' }, t.criticalMs / 1000);
  sink.set(metrics.pingInterval, {}, config.intervalMs / 1000);
}
