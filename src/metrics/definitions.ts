/**
 * Every metric the monitor exports: name, help, type, labels and buckets. This module is the one
 * place these names are spelled; the registry, the recorder, the dashboards and the tests import
 * them from here. The set is a public contract (contract §4) pinned by a golden test.
 */
import {
  CONTRACT_CHECKS,
  CONTRACT_RESULTS,
  LIFECYCLE_RESULTS,
  LIFECYCLE_STEPS,
  CHECK_NAMES,
  KNOWN_STATUS_CODES,
  OPERATIONS,
  PHASES,
  PING_RESULTS,
  QUALIFY_OUTCOMES,
  POLL_STATUSES,
  SKIP_REASONS,
  THRESHOLD_LEVELS,
} from '../checks/results.js';

export type MetricType = 'counter' | 'gauge' | 'histogram';

export interface MetricDefinition {
  name: string;
  help: string;
  type: MetricType;
  labels: readonly string[];
  /** Known values per label (besides `environment`), pre-initialised to 0 at start-up. */
  knownValues?: Readonly<Record<string, readonly string[]>>;
  buckets?: readonly number[];
}

/** Ping latency buckets: boundaries exactly at the 0.1/0.5/1 s thresholds, past the timeout. */
export const PING_BUCKETS = [0.025, 0.05, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 10, 30] as const;
/** Phase buckets: finer at the low end, where connect and TLS live. */
export const PHASE_BUCKETS = [
  0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
] as const;
/** Time to qualify: typical 20–30 s, early warning at 45 s, give-up at 90 s. */
export const QUALIFY_BUCKETS = [1, 2, 5, 10, 15, 20, 25, 30, 45, 60, 75, 90, 120] as const;
/** Lifecycle step durations: a poll step spans the whole polling loop, up to 90 s. */
export const STEP_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 90, 120] as const;

export const METRICS = {
  pingAttempts: {
    name: 'isa_ping_attempts_total',
    help: 'Ping attempts by result.',
    type: 'counter',
    labels: ['environment', 'result'],
    knownValues: { result: PING_RESULTS },
  },
  pingDuration: {
    name: 'isa_ping_duration_seconds',
    help: 'Duration of every ping attempt; timeouts are observed at their elapsed time.',
    type: 'histogram',
    labels: ['environment'],
    buckets: PING_BUCKETS,
  },
  pingPhaseDuration: {
    name: 'isa_ping_phase_duration_seconds',
    help: 'Ping duration split into phases: resolve, connect, tls, processing (time to first byte), transfer.',
    type: 'histogram',
    labels: ['environment', 'phase'],
    knownValues: { phase: PHASES },
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
  lifecycleRuns: {
    name: 'isa_lifecycle_runs_total',
    help: 'Finished synthetic session lifecycle runs by result.',
    type: 'counter',
    labels: ['environment', 'result'],
    knownValues: { result: LIFECYCLE_RESULTS },
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
  contractChecks: {
    name: 'isa_contract_checks_total',
    help: 'API contract checks by result.',
    type: 'counter',
    labels: ['environment', 'check', 'result'],
    knownValues: { check: CONTRACT_CHECKS, result: CONTRACT_RESULTS },
  },
  httpResponses: {
    name: 'isa_http_responses_total',
    help: 'Every response the monitor received, by operation and HTTP status (none: no response).',
    type: 'counter',
    labels: ['environment', 'operation', 'code'],
    knownValues: { operation: OPERATIONS, code: KNOWN_STATUS_CODES },
  },
  syntheticSessionsOpen: {
    name: 'isa_synthetic_sessions_open',
    help: 'Synthetic sessions this monitor created and has not yet seen closed.',
    type: 'gauge',
    labels: ['environment'],
  },
  syntheticSessionsUnrecoverable: {
    name: 'isa_synthetic_sessions_unrecoverable_total',
    help: 'Creates that may have opened a session whose token never arrived, so nothing can close it.',
    type: 'counter',
    labels: ['environment'],
  },
  sessionLedgerWritable: {
    name: 'isa_session_ledger_writable',
    help: 'Whether the last write of the session ledger (state file) succeeded (1) or failed (0).',
    type: 'gauge',
    labels: [],
  },
  serverConnectionsRejected: {
    name: 'isa_metrics_server_connections_rejected_total',
    help: 'Connections to the metrics server refused or cut: over the connection limit or too slow.',
    type: 'counter',
    labels: ['reason'],
    knownValues: { reason: ['connection_limit', 'timeout'] },
  },
  serviceDataSet: {
    name: 'isa_service_data_set_info',
    help: 'The service_data_set behind the latest offerings (value 1).',
    type: 'gauge',
    labels: ['environment', 'service_data_set'],
  },
  checksSkipped: {
    name: 'isa_checks_skipped_total',
    help: 'Scheduled check runs that did not run, by reason.',
    type: 'counter',
    labels: ['environment', 'check', 'reason'],
    knownValues: { check: CHECK_NAMES, reason: SKIP_REASONS },
  },
  checkRuns: {
    name: 'isa_check_runs_total',
    help: 'Finished check runs by check and outcome (pass or fail).',
    type: 'counter',
    labels: ['environment', 'check', 'outcome'],
    knownValues: { check: CHECK_NAMES, outcome: ['pass', 'fail'] },
  },
  checkDuration: {
    name: 'isa_check_duration_seconds',
    help: 'Duration of whole check runs.',
    type: 'histogram',
    labels: ['environment', 'check'],
    knownValues: { check: CHECK_NAMES },
    buckets: STEP_BUCKETS,
  },
  buildInfo: {
    name: 'isa_monitor_build_info',
    help: 'Build information (value 1).',
    type: 'gauge',
    labels: ['version', 'revision', 'nodejs'],
  },
  pingInterval: {
    name: 'isa_ping_interval_seconds',
    help: 'Configured ping interval, for expected-count denominators in rules.',
    type: 'gauge',
    labels: ['environment'],
  },
} as const satisfies Record<string, MetricDefinition>;

export type MetricKey = keyof typeof METRICS;
