/**
 * Every metric the monitor exports: name, help, type, labels and buckets. The universal metrics
 * (every check's runs, responses and contract checks; the monitor's own) are defined here; each
 * check defines its own metrics in its folder, and `metricCatalog` merges them for the checks it
 * is handed (docs/architecture.md, "The composition root"). The registry, the recorder, the
 * dashboards and the tests take names from here instead of retyping strings. The set is a public
 * contract (docs/metrics.md) pinned by a golden test.
 */
import type { AnyCheck } from '../kernel/check.js';
import { CONTRACT_RESULTS, OUTCOMES, SKIP_REASONS } from '../kernel/vocabulary.js';
import type { MetricDefinition } from '../kernel/metric-definition.js';

export type { MetricDefinition, MetricType } from '../kernel/metric-definition.js';

/** Durations of whole check runs: from a fast ping to a lifecycle run at its 120 s deadline. */
export const RUN_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 90, 120] as const;

/** Event-loop lag of the measurement thread: from timer resolution to a stalled second. */
export const LAG_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1] as const;

/**
 * Metrics every check has, and the monitor's own. A `check` label's known values are the names of
 * the checks a catalog is built for (`metricCatalog`), so they are left empty here.
 */
export const UNIVERSAL_METRICS = {
  contractChecks: {
    name: 'isa_contract_checks_total',
    help: 'API contract checks by result.',
    type: 'counter',
    labels: ['environment', 'check', 'result'],
    // The contract checks of the checks a catalog is built for (`metricCatalog`).
    knownValues: { check: [] as readonly string[], result: CONTRACT_RESULTS },
    checkScoped: { check: 'contractChecks' },
  },
  httpResponses: {
    name: 'isa_http_responses_total',
    help: 'Every response the monitor received, by operation and HTTP status (none: no response).',
    type: 'counter',
    labels: ['environment', 'operation', 'code'],
    // The operations of the checks a catalog is built for and, per operation, only the codes its
    // endpoint documents (`Check.operations`, filled in by `metricCatalog`).
    knownValues: { operation: [] as readonly string[], code: [] as readonly string[] },
    knownValuesBy: { code: { by: 'operation', values: {} as Record<string, readonly string[]> } },
    checkScoped: { operation: 'operations' },
  },
  syntheticSessionsOpen: {
    name: 'isa_synthetic_sessions_open',
    help: 'Synthetic sessions this monitor created and has not yet seen closed.',
    type: 'gauge',
    labels: ['environment'],
    sessionsOnly: true,
  },
  syntheticSessionsUnrecoverable: {
    name: 'isa_synthetic_sessions_unrecoverable_total',
    help: 'Creates that may have opened a session whose token never arrived, so nothing can close it.',
    type: 'counter',
    labels: ['environment'],
    sessionsOnly: true,
  },
  contractDriftDifferences: {
    name: 'isa_contract_drift_differences',
    help: 'Open differences between what an operation returns now and its accepted baseline, by severity (docs/drift.md).',
    type: 'gauge',
    labels: ['environment', 'operation', 'severity'],
    knownValues: { severity: ['breaking', 'warning', 'info'] },
  },
  maintenanceActive: {
    name: 'isa_maintenance_active',
    help: '1 while the environment is inside a configured maintenance window, else 0.',
    type: 'gauge',
    labels: ['environment'],
  },
  configLastReloadSuccessful: {
    name: 'isa_config_last_reload_successful',
    help: 'Whether the last configuration reload (SIGHUP) succeeded (1) or was refused (0); 1 from start-up.',
    type: 'gauge',
    labels: [],
  },
  configLastReloadSuccessTimestamp: {
    name: 'isa_config_last_reload_success_timestamp_seconds',
    help: 'When the configuration in force was loaded: start-up, or the last successful reload (Unix seconds).',
    type: 'gauge',
    labels: [],
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
  checksSkipped: {
    name: 'isa_checks_skipped_total',
    help: 'Scheduled check runs that did not run, by reason.',
    type: 'counter',
    labels: ['environment', 'check', 'reason'],
    knownValues: { check: [], reason: SKIP_REASONS },
    checkScoped: { check: 'name' },
    // A run is skipped for an unwritable session ledger only if it creates sessions (the
    // catalog lists each check's reasons).
    knownValuesBy: { reason: { by: 'check', values: {} } },
  },
  checkRunsAbandoned: {
    name: 'isa_check_runs_abandoned_total',
    help: 'Check runs abandoned: still in flight past their deadline and their cleanups, aborted, and their sessions left to the reaper.',
    type: 'counter',
    labels: ['environment', 'check'],
    knownValues: { check: [] },
    checkScoped: { check: 'name' },
  },
  checkRuns: {
    name: 'isa_check_runs_total',
    help: 'Finished check runs by check and outcome (pass or fail).',
    type: 'counter',
    labels: ['environment', 'check', 'outcome'],
    knownValues: { check: [], outcome: OUTCOMES },
    // Not the ping's: its run is one request, isa_ping_attempts_total (Check.ownRunMetrics).
    checkScoped: { check: 'genericRuns' },
  },
  checkDuration: {
    name: 'isa_check_duration_seconds',
    help: 'Duration of whole check runs, less their waits for request-budget tokens.',
    type: 'histogram',
    labels: ['environment', 'check'],
    knownValues: { check: [] },
    // Not the ping's: its run is one request, isa_ping_duration_seconds (Check.ownRunMetrics).
    checkScoped: { check: 'genericRuns' },
    buckets: RUN_BUCKETS,
  },
  requestBudgetWait: {
    name: 'isa_request_budget_wait_seconds_total',
    help: 'Time check runs waited for request-budget tokens (kept out of isa_check_duration_seconds).',
    type: 'counter',
    labels: ['environment', 'check'],
    knownValues: { check: [] },
    checkScoped: { check: 'name' },
  },
  measurementLag: {
    name: 'isa_measurement_event_loop_lag_seconds',
    help: 'How late a timer fired on the thread that runs the checks and times every request: sampled every 50 ms while an API call is in flight, not between calls.',
    type: 'histogram',
    labels: [],
    buckets: LAG_BUCKETS,
  },
  buildInfo: {
    name: 'isa_monitor_build_info',
    help: 'Build information (value 1).',
    type: 'gauge',
    labels: ['version', 'revision', 'nodejs'],
  },
} as const satisfies Record<string, MetricDefinition>;

/** Results of the control probe (`control`): a plain GET of a neutral URL. */
export const CONTROL_RESULTS = ['ok', 'unexpected_status', 'timeout', 'network_error'] as const;
export type ControlResult = (typeof CONTROL_RESULTS)[number];

/**
 * The control probe's metrics: one per monitor (per location), so no `environment` label. They
 * exist only when `control` is configured.
 */
export const CONTROL_METRICS = {
  controlProbeSuccess: {
    name: 'isa_control_probe_success',
    help: '1 if the last control probe (GET of the neutral control.url) got a 2xx, else 0.',
    type: 'gauge',
    labels: [],
  },
  controlProbeAttempts: {
    name: 'isa_control_probe_attempts_total',
    help: 'Control probe attempts by result.',
    type: 'counter',
    labels: ['result'],
    knownValues: { result: CONTROL_RESULTS },
  },
  controlProbeDuration: {
    name: 'isa_control_probe_duration_seconds',
    help: 'Duration of every control probe; timeouts are observed at their elapsed time.',
    type: 'histogram',
    labels: [],
    buckets: [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  },
} as const satisfies Record<string, MetricDefinition>;

/** The metrics of one build: the universal ones, the control probe's and the given checks' own. */
export interface MetricCatalog {
  /** The checks it was built for, in their order. */
  readonly checks: readonly AnyCheck[];
  /** Every definition by key (the universal ones with the checks' names as `check` values). */
  readonly definitions: Readonly<Record<string, MetricDefinition>>;
  /**
   * The names of the metrics of checks' follow-up runs: zero-initialised only in environments
   * where the check's follow-up policy is on (`Recorder.describeEnvironment`), not with the check.
   */
  readonly followUpNames: ReadonlySet<string>;
  /** Which check owns each metric key; universal metrics have none. */
  readonly owner: ReadonlyMap<string, string>;
}

/** The keys of the metrics every build has (the universal and the control probe's). */
export type MetricKey = keyof typeof UNIVERSAL_METRICS | keyof typeof CONTROL_METRICS;

/**
 * The status codes `isa_http_responses_total` starts at 0 for each operation of `checks`: those
 * each check declares for it (`Check.operations`), merged where two checks share an operation.
 */
export function operationStatusCodes(
  checks: readonly AnyCheck[],
): Readonly<Record<string, readonly string[]>> {
  const codes: Record<string, string[]> = {};
  for (const check of checks) {
    for (const [operation, spec] of Object.entries(check.operations)) {
      codes[operation] = [...new Set([...(codes[operation] ?? []), ...spec.codes])];
    }
  }
  return codes;
}

/** Every code some operation of `checks` starts at 0, sorted (numbers, then `none`). */
export function knownStatusCodes(checks: readonly AnyCheck[]): readonly string[] {
  return [...new Set(Object.values(operationStatusCodes(checks)).flat())].sort();
}

/** The contract checks `checks` report, each once, in their order. */
export function contractChecksOf(checks: readonly AnyCheck[]): readonly string[] {
  return [...new Set(checks.flatMap((check) => check.contractChecks))];
}

/**
 * The universal metrics whose label values come from the checks' declarations: the operations
 * and codes of `isa_http_responses_total`, the contract checks of `isa_contract_checks_total`.
 */
function declaredByChecks(checks: readonly AnyCheck[]): Record<string, MetricDefinition> {
  const byOperation = operationStatusCodes(checks);
  const { httpResponses, contractChecks } = UNIVERSAL_METRICS;
  return {
    httpResponses: {
      ...httpResponses,
      knownValues: { operation: Object.keys(byOperation), code: knownStatusCodes(checks) },
      knownValuesBy: { code: { by: 'operation', values: byOperation } },
    },
    contractChecks: {
      ...contractChecks,
      knownValues: { ...contractChecks.knownValues, check: contractChecksOf(checks) },
    },
  };
}

/** The catalog of `checks`: what the registry creates and the recorder writes. */
export function metricCatalog(checks: readonly AnyCheck[]): MetricCatalog {
  const names = checks.map((check) => check.name);
  // The skip reasons each check can meet: `ledger_unwritable` only where runs create sessions.
  const skipReasons = Object.fromEntries(
    checks.map((check) => [
      check.name,
      check.createsSessions === true
        ? SKIP_REASONS
        : SKIP_REASONS.filter((reason) => reason !== 'ledger_unwritable'),
    ]),
  );
  const universal = Object.fromEntries(
    Object.entries(UNIVERSAL_METRICS as Record<string, MetricDefinition>).map(([key, def]) => {
      // The `check` label of the contract checks names a contract check, not a check.
      const scope = def.checkScoped?.['check'];
      if (scope !== 'name' && scope !== 'genericRuns') return [key, def];
      const knownValuesBy =
        def.knownValuesBy === undefined
          ? {}
          : { knownValuesBy: { reason: { by: 'check', values: skipReasons } } };
      return [key, { ...def, knownValues: { ...def.knownValues, check: names }, ...knownValuesBy }];
    }),
  );
  const definitions: Record<string, MetricDefinition> = {
    ...universal,
    ...declaredByChecks(checks),
    ...CONTROL_METRICS,
  };
  for (const check of checks) {
    for (const [key, def] of Object.entries(check.metrics)) {
      if (key in definitions) throw new Error(`metric key ${key} of ${check.name} is taken`);
      definitions[key] = def;
    }
  }
  return {
    checks,
    definitions,
    followUpNames: new Set(
      checks.flatMap((check) => (check.followUp?.metrics ?? []).map((def) => def.name)),
    ),
    owner: new Map(
      checks.flatMap((check) => Object.keys(check.metrics).map((key) => [key, check.name])),
    ),
  };
}
