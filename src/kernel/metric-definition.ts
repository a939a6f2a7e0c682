/**
 * The shape of a metric definition: plain data (no prom-client), so that checks can declare their
 * own metrics in their own file and the registry can build them.
 */
import type { ThresholdLevel } from './latency.js';

export type MetricType = 'counter' | 'gauge' | 'histogram';

export interface MetricDefinition {
  name: string;
  help: string;
  type: MetricType;
  labels: readonly string[];
  /** Known values per label (besides `environment`), pre-initialised to 0 at start-up. */
  knownValues?: Readonly<Record<string, readonly string[]>>;
  /**
   * Labels of a universal metric whose values belong to checks (a check's name, its operations,
   * its contract checks): they are zero-initialised only with the values of enabled checks.
   */
  checkScoped?: Readonly<Record<string, CheckVocabulary>>;
  /**
   * Labels whose values depend on an environment's configuration rather than on its checks (the
   * request phases its `base_url` can have): zero-initialised only with the environment's values.
   */
  environmentScoped?: Readonly<Record<string, EnvironmentVocabulary>>;
  /**
   * Labels whose known values depend on an earlier label's value (the status codes each
   * operation's endpoint documents): per value of `by`, these are zero-initialised instead of the
   * label's `knownValues` (which stay the union, for validation and docs).
   */
  knownValuesBy?: Readonly<
    Record<string, { by: string; values: Readonly<Record<string, readonly string[]>> }>
  >;
  /**
   * Labels of which only these known values start at 0; the label's other known values appear
   * when first seen, as a status code no endpoint documents does. For a family whose rare values
   * no rule reads, where a zero series of each in every environment costs more than it tells.
   */
  startAtZero?: Readonly<Record<string, readonly string[]>>;
  buckets?: readonly number[];
  /**
   * Exported only for environments that can have synthetic sessions: where an enabled check
   * creates them (`Check.createsSessions`), or where the session ledger named the environment at
   * start-up (the measurement engine reports those, `Recorder.setSessionsOpen`). Elsewhere such a
   * series could only be 0.
   */
  sessionsOnly?: boolean;
  /**
   * Bounds the configuration adds to `buckets`, each distinct value once, from the environments
   * that run the metric's check:
   * - `thresholds`: every configured latency threshold (expected, warning and critical), exactly:
   *   the rules judge each threshold at the bucket whose `le` is its value
   *   (`environment_level:isa_latency_threshold_seconds:bucket`), never at the next bound up;
   * - `pastTimeout`: the largest bound is at least twice the largest `timeout` of the check's
   *   section, one more bound at twice that timeout where `buckets` stop short. A timeout is
   *   observed at its elapsed time, a little after it fires: it lands in a finite bucket, not
   *   only in `+Inf`.
   */
  configuredBounds?: { thresholds?: boolean; pastTimeout?: boolean };
  /**
   * Instead of `buckets`, only the bounds the rules read: each environment's configured threshold
   * of this level, exactly (the histogram of the same check with `configuredBounds.thresholds`
   * has the same bound). Where no environment's thresholds are known, `buckets`.
   */
  thresholdBuckets?: ThresholdLevel;
}

/**
 * Which part of a check's declared vocabulary a check-scoped label takes its values from: its name,
 * its name where the run metrics common to all checks count and time its runs (not where
 * `Check.ownRunMetrics`), its operations, its contract checks.
 */
export type CheckVocabulary = 'name' | 'genericRuns' | 'operations' | 'contractChecks';

/**
 * Which part of an environment's configuration an environment-scoped label takes its values from:
 * the request phases its `base_url` can have (`resolve` only where a host name is resolved).
 */
export type EnvironmentVocabulary = 'phases';
