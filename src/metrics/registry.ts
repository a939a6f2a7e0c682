/**
 * Builds the daemon's metrics: one non-global prom-client Registry holding every metric of
 * `definitions.ts`, with every known label combination of the enabled checks exported as 0 from
 * start-up so that `increase()` sees the first failure after a restart.
 *
 * Zero-initialisation policy (also in docs/metrics.md):
 * - a check's own counters and histograms: every combination of an environment where the check is
 *   enabled × the definition's `knownValues` starts at 0; nothing for a disabled check;
 * - the universal counters and histograms: the same, with their check-scoped labels (`check`,
 *   `operation`) limited to the values of the checks enabled in the environment;
 * - the session families (`sessionsOnly`: `isa_synthetic_sessions_open`,
 *   `isa_synthetic_sessions_unrecoverable_total`) start at 0 only where an enabled check creates
 *   sessions; the recorder adds an environment the session ledger names at start-up;
 * - configuration gauges (e.g. `isa_latency_threshold_seconds`) are set by their check at start-up
 *   (`Recorder.describeEnvironment`) and `isa_monitor_build_info` here;
 * - `isa_maintenance_active` starts at 0 for every environment; the daemon sets it at each window
 *   edge (`maintenance/watcher.ts`);
 * - the "last event" gauges (`isa_ping_up`, `isa_lifecycle_last_success_timestamp_seconds`, ...)
 *   stay absent until the first event they describe: a 0 would claim "down", "0 s" or "1970"
 *   before anything was measured.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import processCpuTotalCollector from 'prom-client/lib/metrics/processCpuTotal.js';
import processStartTimeCollector from 'prom-client/lib/metrics/processStartTime.js';
import osMemoryHeapCollector from 'prom-client/lib/metrics/osMemoryHeap.js';
import processOpenFileDescriptorsCollector from 'prom-client/lib/metrics/processOpenFileDescriptors.js';
import processMaxFileDescriptorsCollector from 'prom-client/lib/metrics/processMaxFileDescriptors.js';
import processResourcesCollector from 'prom-client/lib/metrics/processResources.js';
import processHandlesCollector from 'prom-client/lib/metrics/processHandles.js';
import processRequestsCollector from 'prom-client/lib/metrics/processRequests.js';
import heapSizeAndUsedCollector from 'prom-client/lib/metrics/heapSizeAndUsed.js';
import heapSpacesSizeAndUsedCollector from 'prom-client/lib/metrics/heapSpacesSizeAndUsed.js';
import versionCollector from 'prom-client/lib/metrics/version.js';
import gcCollector from 'prom-client/lib/metrics/gc.js';
import { createsSessions, type AnyCheck } from '../kernel/check.js';
import { THRESHOLD_LEVELS, type LatencyThresholds } from '../kernel/latency.js';
import { sectionOf, type EnvironmentConfig } from '../config/index.js';
import { PHASES, requestPhases } from '../kernel/vocabulary.js';
import {
  CONTROL_METRICS,
  UNIVERSAL_METRICS,
  metricCatalog,
  type MetricCatalog,
  type MetricDefinition,
  type MetricKey,
} from './definitions.js';
import type { CheckVocabulary, EnvironmentVocabulary } from '../kernel/metric-definition.js';

/** The labels `createMetrics` put on every series of a registry (prom-client has no getter). */
const DEFAULT_LABELS = new WeakMap<object, Readonly<Record<string, string>>>();

/** The labels every series of `registry` carries (`location`), for views that render it. */
export function defaultLabelsOf(registry: object): Readonly<Record<string, string>> {
  return DEFAULT_LABELS.get(registry) ?? {};
}

/** What the registry needs to know about one configured environment. */
export interface MetricsEnvironment {
  name: string;
  /** Names of the checks enabled in the environment; default: every registered check. */
  checks?: readonly string[];
  /**
   * Its latency thresholds: bounds of the histograms with `configuredBounds.thresholds`, and the
   * only bounds of those with `thresholdBuckets`.
   */
  thresholds?: LatencyThresholds;
  /**
   * The `timeout` of each enabled check's section, in ms: the histograms with
   * `configuredBounds.pastTimeout` reach past their check's.
   */
  timeoutsMs?: Readonly<Record<string, number>>;
  /** Its `base_url`: an IP literal has no `resolve` phase. Default: every phase. */
  baseUrl?: string;
}

/**
 * What the registry needs of a configured environment: series exist only for the checks it runs,
 * its thresholds and ping timeout are bounds of the ping histograms, its base URL picks the
 * request phases (docs/metrics.md, "What exists from start-up").
 */
export function metricsEnvironmentOf(
  env: EnvironmentConfig,
  checks: readonly AnyCheck[],
): MetricsEnvironment {
  const enabled = checks.filter((check) => sectionOf(env, check).enabled);
  return {
    name: env.name,
    checks: enabled.map((c) => c.name),
    thresholds: env.thresholds,
    timeoutsMs: Object.fromEntries(enabled.map((c) => [c.name, sectionOf(env, c).timeoutMs])),
    baseUrl: env.baseUrl,
  };
}

/** Values of `isa_monitor_build_info`. */
export interface BuildInfo {
  version: string;
  revision: string;
  nodejs: string;
}

type Definition<K extends MetricKey> = (typeof UNIVERSAL_METRICS & typeof CONTROL_METRICS)[K];
type LabelOf<K extends MetricKey> = Definition<K>['labels'][number];
type HandleOf<K extends MetricKey> = Definition<K>['type'] extends 'counter'
  ? Counter<LabelOf<K>>
  : Definition<K>['type'] extends 'gauge'
    ? Gauge<LabelOf<K>>
    : Histogram<LabelOf<K>>;

/** One typed prom-client handle per key of the metrics every build has. */
export type MetricHandles = { readonly [K in MetricKey]: HandleOf<K> };

/**
 * The registry, a typed handle for every metric every build has, and the catalog it was made
 * from; the checks' own handles are there too, by key, for the recorder's sinks (`handleOf`).
 */
export interface Metrics extends MetricHandles {
  readonly registry: Registry;
  readonly catalog: MetricCatalog;
}

/** The handle of any metric of the catalog, by key (a check's own metrics among them). */
export function handleOf(
  metrics: Metrics,
  key: string,
): Counter<string> | Gauge<string> | Histogram<string> | undefined {
  return (
    metrics as unknown as Record<string, Counter<string> | Gauge<string> | Histogram<string>>
  )[key];
}

export interface CreateMetricsOptions {
  /** The checks of this build, from the composition root (`checks/index.ts`). */
  checks: readonly AnyCheck[];
  environments: readonly MetricsEnvironment[];
  build: BuildInfo;
  /** Defaults to a new Registry; never the global one. */
  registry?: Registry;
  /** Process and Node.js metrics (`process_*`, `nodejs_*`); default true. */
  collectDefaultMetrics?: boolean;
  /**
   * The config's `location`: a `location` label on every series, exactly as a target label of
   * the scrape config would put it; absent when unset.
   */
  location?: string | null;
  /** Whether `control` is configured: its metrics exist (zero-initialised) only then. */
  control?: boolean;
}

/**
 * Creates and registers every metric of `METRICS` in a (new, non-global) registry, sets the
 * configuration and build gauges and zero-initialises every known label combination.
 * Throws on duplicate environment names (a configuration error the config loader reports first).
 */
export function createMetrics(opts: CreateMetricsOptions): Metrics {
  const registry = opts.registry ?? new Registry();
  if (opts.location) {
    const labels = { location: opts.location };
    registry.setDefaultLabels(labels);
    DEFAULT_LABELS.set(registry, labels);
  }
  const names = opts.environments.map((env) => env.name);
  const duplicate = names.find((name, i) => names.indexOf(name) !== i);
  if (duplicate !== undefined) {
    throw new Error(`duplicate environment name for metrics: ${duplicate}`);
  }

  const catalog = metricCatalog(opts.checks);
  const handles: Record<string, Counter<string> | Gauge<string> | Histogram<string>> = {};
  for (const [key, def] of Object.entries(catalog.definitions)) {
    // Without `control`, its families are kept out of the registry: absent, not empty. The
    // success gauge joins at the first probe (`Recorder.recordControlProbe`): prom-client would
    // export a label-less gauge as 0, a "failing" before anything was probed.
    const registered =
      !(key in CONTROL_METRICS) || (opts.control === true && key !== 'controlProbeSuccess');
    handles[key] = createHandle(
      def,
      registered ? registry : null,
      opts.environments,
      catalog.owner.get(key),
    );
  }
  const metrics = { registry, catalog, ...handles } as unknown as Metrics;

  if (opts.collectDefaultMetrics ?? true) registerProcessMetrics(registry);

  metrics.buildInfo.set(
    { version: opts.build.version, revision: opts.build.revision, nodejs: opts.build.nodejs },
    1,
  );
  // Until the measurement engine has tried its first write of the state file.
  metrics.sessionLedgerWritable.set(1);
  // The configuration in force was loaded at start-up, as Prometheus's own
  // prometheus_config_last_reload_* report it (docs/configuration.md, "Reload").
  metrics.configLastReloadSuccessful.set(1);
  metrics.configLastReloadSuccessTimestamp.set(Math.floor(Date.now() / 1000));
  if (opts.control === true) {
    for (const result of CONTROL_METRICS.controlProbeAttempts.knownValues.result) {
      metrics.controlProbeAttempts.inc({ result }, 0);
    }
    metrics.controlProbeDuration.zero({});
  }
  for (const env of opts.environments) {
    const enabled = opts.checks.filter((check) => env.checks?.includes(check.name) ?? true);
    zeroInitialise(metrics, env, enabled);
  }
  return metrics;
}

/**
 * prom-client's default collectors (`collectDefaultMetrics`) except its event-loop lag monitor.
 * That monitor samples the thread it runs on with a timer every 10 ms: ~8 ms of CPU a second on
 * an idle daemon, for the lag of the main thread, which serves /metrics and logs but times nothing.
 * The lag that bears on measurements is the measurement thread's, sampled while checks run
 * (`isa_measurement_event_loop_lag_seconds`, `measurement/lag.ts`). The collectors are
 * prom-client's own modules, imported statically so that the build bundles them (a `require` by
 * computed name would load a second copy of prom-client from node_modules); the package is pinned
 * to an exact version, and a test checks the families they register.
 */
const PROCESS_COLLECTORS = [
  processCpuTotalCollector,
  processStartTimeCollector,
  osMemoryHeapCollector,
  processOpenFileDescriptorsCollector,
  processMaxFileDescriptorsCollector,
  processResourcesCollector,
  processHandlesCollector,
  processRequestsCollector,
  heapSizeAndUsedCollector,
  heapSpacesSizeAndUsedCollector,
  versionCollector,
  gcCollector,
];

/**
 * Gauges prom-client names like counters. Prometheus's linter (`promtool check metrics`) rejects
 * a non-counter ending in `_total`, and each is only the sum of the gauge by `type` registered
 * beside it (`sum(nodejs_active_handles)`), so they are left out (docs/metrics.md).
 */
export const GAUGES_NAMED_LIKE_COUNTERS = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
] as const;

function registerProcessMetrics(registry: Registry): void {
  for (const collector of PROCESS_COLLECTORS) collector(registry, {});
  for (const name of GAUGES_NAMED_LIKE_COUNTERS) registry.removeSingleMetric(name);
}

export function createHandle(
  def: MetricDefinition,
  registry: Registry | null,
  environments: readonly MetricsEnvironment[],
  check: string | undefined,
): Counter<string> | Gauge<string> | Histogram<string> {
  const common = {
    name: def.name,
    help: def.help,
    labelNames: [...def.labels],
    registers: registry ? [registry] : [],
  };
  switch (def.type) {
    case 'counter':
      return new Counter(common);
    case 'gauge':
      return new Gauge(common);
    case 'histogram':
      return new Histogram({ ...common, buckets: bucketsOf(def, environments, check) });
  }
}

/**
 * A histogram's buckets, ascending: its definition's plus the bounds its `configuredBounds` take
 * from the environments that run `check` (the metric's owner); with `thresholdBuckets`, only
 * the configured thresholds of that level (the definition's buckets while none is known).
 */
export function bucketsOf(
  def: MetricDefinition,
  environments: readonly MetricsEnvironment[],
  check?: string,
): number[] {
  const running = environments.filter(
    (env) => check === undefined || (env.checks?.includes(check) ?? true),
  );
  const seconds = (ms: number) => ms / 1000;
  const level = def.thresholdBuckets;
  if (level !== undefined) {
    const thresholds = running.flatMap((env) => env.thresholds?.[`${level}Ms`] ?? []);
    if (thresholds.length > 0) return ascending(thresholds.map(seconds));
    return ascending(def.buckets ?? []);
  }
  // A Set: each distinct bound once, where a thousand environments mostly share their thresholds.
  const bounds = new Set(def.buckets ?? []);
  if (def.configuredBounds?.thresholds === true) {
    for (const env of running) {
      const t = env.thresholds;
      if (t) for (const level of THRESHOLD_LEVELS) bounds.add(seconds(t[`${level}Ms`]));
    }
  }
  if (def.configuredBounds?.pastTimeout === true && check !== undefined) {
    const timeouts = running.flatMap((env) => env.timeoutsMs?.[check] ?? []);
    const past = 2 * seconds(Math.max(0, ...timeouts));
    if (past > Math.max(0, ...bounds)) bounds.add(past);
  }
  return ascending(bounds);
}

function ascending(values: Iterable<number>): number[] {
  return [...new Set(values)].sort((a, b) => a - b);
}

/** The values of each environment vocabulary of `env`. */
export function environmentVocabulary(
  env: MetricsEnvironment,
): Record<EnvironmentVocabulary, readonly string[]> {
  return { phases: env.baseUrl === undefined ? PHASES : requestPhases(env.baseUrl) };
}

/** The values of each check vocabulary declared by `checks`. */
export function checkVocabulary(
  checks: readonly AnyCheck[],
): Record<CheckVocabulary, readonly string[]> {
  const union = (values: string[]) => [...new Set(values)];
  return {
    name: checks.map((check) => check.name),
    genericRuns: checks.filter((check) => check.ownRunMetrics !== true).map((check) => check.name),
    operations: union(checks.flatMap((check) => Object.keys(check.operations))),
    contractChecks: union(checks.flatMap((check) => [...check.contractChecks])),
  };
}

/**
 * Every label combination of a counter or histogram that starts at 0: the given environments × the
 * known values of each other label (those of `startAtZero` where it lists the label), labels in
 * definition order (the exposition keeps that order). A label with `knownValuesBy` takes the
 * values listed for its `by` label's value in each combination. With
 * `vocabulary`, check-scoped labels take only the values the given checks declare, and
 * environment-scoped ones only those of the environment's configuration.
 */
export function knownLabelSets(
  def: MetricDefinition,
  environments: readonly string[],
  vocabulary?: Partial<Record<CheckVocabulary | EnvironmentVocabulary, readonly string[]>>,
): Array<Record<string, string>> {
  let sets: Array<Record<string, string>> = [{}];
  for (const label of def.labels) {
    const scope = def.checkScoped?.[label] ?? def.environmentScoped?.[label];
    let values =
      label === 'environment'
        ? environments
        : (def.startAtZero?.[label] ?? def.knownValues?.[label]);
    const allowed = scope !== undefined ? vocabulary?.[scope] : undefined;
    if (values !== undefined && allowed !== undefined) {
      values = values.filter((value) => allowed.includes(value));
    }
    if (values === undefined) {
      // A label without a known value set cannot be pre-initialised (e.g. service_data_set).
      return [];
    }
    const known = values;
    const by = def.knownValuesBy?.[label];
    const valuesFor = (set: Record<string, string>): readonly string[] =>
      (by !== undefined ? by.values[set[by.by] ?? ''] : undefined) ?? known;
    sets = sets.flatMap((set) => valuesFor(set).map((value) => ({ ...set, [label]: value })));
  }
  return sets;
}

/**
 * Zero-initialises, for one environment, the universal metrics and those of enabled checks; with
 * `families`, only the families it accepts (by metric key).
 */
export function zeroInitialise(
  metrics: Metrics,
  env: MetricsEnvironment,
  enabled: readonly AnyCheck[],
  families: (key: string, def: MetricDefinition) => boolean = () => true,
): void {
  const environment = env.name;
  const names = enabled.map((check) => check.name);
  const vocabulary = { ...checkVocabulary(enabled), ...environmentVocabulary(env) };
  // Sessions exist only where a check creates them (or the ledger names the environment, which
  // the recorder learns from the measurement engine at start-up: `Recorder.setSessionsOpen`).
  const sessions = createsSessions(enabled);
  if (sessions) metrics.syntheticSessionsOpen.set({ environment }, 0);
  // Outside a window until the daemon's first evaluation, which follows at once (daemon.ts).
  metrics.maintenanceActive.set({ environment }, 0);
  const { catalog } = metrics;
  for (const [key, def] of Object.entries(catalog.definitions)) {
    if (def.type === 'gauge' || key in CONTROL_METRICS || !families(key, def)) continue;
    if (def.sessionsOnly === true && !sessions) continue;
    // Follow-up families start where the check's follow-up runs are on (the recorder does that).
    if (catalog.followUpNames.has(def.name)) continue;
    const owner = catalog.owner.get(key);
    if (owner !== undefined && !names.includes(owner)) continue;
    const handle = handleOf(metrics, key) as Counter<string> | Histogram<string>;
    for (const labels of knownLabelSets(def, [environment], vocabulary)) {
      if (handle instanceof Histogram) handle.zero(labels);
      else handle.inc(labels, 0);
    }
  }
}
