/**
 * Builds the daemon's metrics: one non-global prom-client Registry holding every metric of
 * `definitions.ts`, with every known label combination exported as 0 from start-up so that
 * `increase()` sees the first failure after a restart.
 *
 * Zero-initialisation policy (also in docs/metrics.md):
 * - counters and histograms: every combination of configured environment × the definition's
 *   `knownValues` starts at 0;
 * - `isa_synthetic_sessions_open` starts at 0 per environment;
 * - the configuration gauges (`isa_latency_threshold_seconds`, `isa_ping_interval_seconds`) and
 *   `isa_monitor_build_info` are set at start-up;
 * - the "last event" gauges (`isa_ping_up`, `isa_ping_last_duration_seconds`,
 *   `isa_ping_last_attempt_timestamp_seconds`, `isa_lifecycle_last_success_timestamp_seconds`,
 *   `isa_service_data_set_info`) stay absent until the first event they describe: a 0 would
 *   claim "down", "0 s" or "1970" before anything was measured.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { METRICS, type MetricDefinition, type MetricKey } from './definitions.js';

/** What the registry needs to know about one configured environment. */
export interface MetricsEnvironment {
  name: string;
  thresholds: { expectedMs: number; warningMs: number; criticalMs: number };
  pingIntervalMs: number;
}

/** Values of `isa_monitor_build_info`. */
export interface BuildInfo {
  version: string;
  revision: string;
  nodejs: string;
}

type Definition<K extends MetricKey> = (typeof METRICS)[K];
type LabelOf<K extends MetricKey> = Definition<K>['labels'][number];
type HandleOf<K extends MetricKey> = Definition<K>['type'] extends 'counter'
  ? Counter<LabelOf<K>>
  : Definition<K>['type'] extends 'gauge'
    ? Gauge<LabelOf<K>>
    : Histogram<LabelOf<K>>;

/** One typed prom-client handle per key of `METRICS`. */
export type MetricHandles = { readonly [K in MetricKey]: HandleOf<K> };

/** The registry and a typed handle for every metric of `METRICS`. */
export interface Metrics extends MetricHandles {
  readonly registry: Registry;
}

export interface CreateMetricsOptions {
  environments: readonly MetricsEnvironment[];
  build: BuildInfo;
  /** Defaults to a new Registry; never the global one. */
  registry?: Registry;
  /** Process and Node.js metrics (`process_*`, `nodejs_*`); default true. */
  collectDefaultMetrics?: boolean;
}

/**
 * Creates and registers every metric of `METRICS` in a (new, non-global) registry, sets the
 * configuration and build gauges and zero-initialises every known label combination.
 * Throws on duplicate environment names (a configuration error the config loader reports first).
 */
export function createMetrics(opts: CreateMetricsOptions): Metrics {
  const registry = opts.registry ?? new Registry();
  const names = opts.environments.map((env) => env.name);
  const duplicate = names.find((name, i) => names.indexOf(name) !== i);
  if (duplicate !== undefined) {
    throw new Error(`duplicate environment name for metrics: ${duplicate}`);
  }

  const handles: Record<string, Counter<string> | Gauge<string> | Histogram<string>> = {};
  for (const [key, def] of Object.entries(METRICS) as Array<[MetricKey, MetricDefinition]>) {
    handles[key] = createHandle(def, registry);
  }
  const metrics = { registry, ...handles } as unknown as Metrics;

  if (opts.collectDefaultMetrics ?? true) {
    collectDefaultMetrics({ register: registry });
  }

  metrics.buildInfo.set(
    { version: opts.build.version, revision: opts.build.revision, nodejs: opts.build.nodejs },
    1,
  );
  // Until the measurement engine has tried its first write of the state file.
  metrics.sessionLedgerWritable.set(1);
  for (const env of opts.environments) {
    const environment = env.name;
    metrics.latencyThreshold.set(
      { environment, level: 'expected' },
      env.thresholds.expectedMs / 1000,
    );
    metrics.latencyThreshold.set(
      { environment, level: 'warning' },
      env.thresholds.warningMs / 1000,
    );
    metrics.latencyThreshold.set(
      { environment, level: 'critical' },
      env.thresholds.criticalMs / 1000,
    );
    metrics.pingInterval.set({ environment }, env.pingIntervalMs / 1000);
    metrics.syntheticSessionsOpen.set({ environment }, 0);
  }

  zeroInitialise(metrics, names);
  return metrics;
}

function createHandle(
  def: MetricDefinition,
  registry: Registry,
): Counter<string> | Gauge<string> | Histogram<string> {
  const common = {
    name: def.name,
    help: def.help,
    labelNames: [...def.labels],
    registers: [registry],
  };
  switch (def.type) {
    case 'counter':
      return new Counter(common);
    case 'gauge':
      return new Gauge(common);
    case 'histogram':
      return new Histogram({ ...common, buckets: [...(def.buckets ?? [])] });
  }
}

/**
 * Every label combination of every counter and histogram: configured environments × the known
 * values of each other label, labels in definition order (the exposition keeps that order).
 */
export function knownLabelSets(
  def: MetricDefinition,
  environments: readonly string[],
): Array<Record<string, string>> {
  let sets: Array<Record<string, string>> = [{}];
  for (const label of def.labels) {
    const values = label === 'environment' ? environments : def.knownValues?.[label];
    if (values === undefined) {
      // A label without a known value set cannot be pre-initialised (e.g. service_data_set).
      return [];
    }
    sets = sets.flatMap((set) => values.map((value) => ({ ...set, [label]: value })));
  }
  return sets;
}

function zeroInitialise(metrics: Metrics, environments: readonly string[]): void {
  for (const [key, def] of Object.entries(METRICS) as Array<[MetricKey, MetricDefinition]>) {
    if (def.type === 'gauge') continue;
    const handle = metrics[key] as Counter<string> | Histogram<string>;
    for (const labels of knownLabelSets(def, environments)) {
      if (handle instanceof Histogram) handle.zero(labels);
      else handle.inc(labels, 0);
    }
  }
}
