/**
 * PromQL building blocks for the dashboards. Metric names come from the metric definitions
 * (`src/metrics/definitions.ts` and each check's own, docs/metrics.md) and label names and values
 * are type-checked against each definition's label list and known values, so a typo in a panel
 * query fails `tsc` instead of drawing an empty panel.
 *
 * Registry-free: it reads a definition it is handed and imports only the kernel's shape of one,
 * so a check's own rows (`src/checks/<name>/dashboard.ts`) may use it without reaching the
 * registry (docs/architecture.md, "Layers").
 */
import type { MetricDefinition } from '../kernel/metric-definition.js';

type HistogramDefinition = MetricDefinition & { type: 'histogram' };

/** The label names a metric definition declares. */
type LabelOf<D extends MetricDefinition> = D['labels'][number];

/** The known values of one label, or `string` where the set is open (environment, data set). */
type ValueOf<D extends MetricDefinition, L extends string> = D extends {
  knownValues: infer K;
}
  ? L extends keyof K
    ? K[L] extends readonly (infer V)[]
      ? V
      : string
    : string
  : string;

/** One label matcher: a value (=), `{ not }` (!=), `{ re }` (=~ alternation), `{ nre }` (!~). */
export type Matcher<V extends string> =
  V | { not: V } | { re: readonly V[] } | { nre: readonly V[] };

/** Label matchers for one metric, keyed by its declared labels only. */
export type Matchers<D extends MetricDefinition> = {
  [L in LabelOf<D>]?: Matcher<ValueOf<D, L>>;
};

/** The scrape job the monitor runs under; the meta-monitoring alerts use the same name. */
export const MONITOR_JOB = 'isa-monitor';

/** Grafana template variables, as they appear inside queries. */
export const VARIABLES = {
  environment: '$environment',
  instance: '$instance',
  location: '$location',
  interval: '$__interval',
  rateInterval: '$__rate_interval',
  range: '$__range',
} as const;

/**
 * prom-client's default process and Node.js metrics used by the dashboards. Not ours to define,
 * so they are spelled here once; a test checks each against what prom-client registers.
 */
export const RUNTIME_METRICS = {
  heapUsed: 'nodejs_heap_size_used_bytes',
  residentMemory: 'process_resident_memory_bytes',
  cpuSeconds: 'process_cpu_seconds_total',
  startTime: 'process_start_time_seconds',
} as const;

/** Series Prometheus itself creates: the scrape health and the alert state of rules. */
export const PROMETHEUS_METRICS = {
  up: 'up',
  alerts: 'ALERTS',
} as const;

const ENVIRONMENT_MATCHER = `environment=~"${VARIABLES.environment}"`;
const INSTANCE_MATCHER = `instance=~"${VARIABLES.instance}"`;
/**
 * Every series may carry `location` (a config key or a target label, docs/metrics.md); the
 * variable's "All" is `.*`, which also matches series without one.
 */
const LOCATION_MATCHER = `location=~"${VARIABLES.location}"`;

/** Escapes a value for a double-quoted PromQL string. */
function quote(value: string): string {
  return JSON.stringify(value);
}

/** Escapes regex metacharacters so a known label value matches only itself inside `=~`. */
function regexLiteral(value: string): string {
  return value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function renderMatcher(label: string, matcher: Matcher<string>): string {
  if (typeof matcher === 'string') return `${label}=${quote(matcher)}`;
  if ('not' in matcher) return `${label}!=${quote(matcher.not)}`;
  if ('re' in matcher) return `${label}=~${quote(matcher.re.map(regexLiteral).join('|'))}`;
  return `${label}!~${quote(matcher.nre.map(regexLiteral).join('|'))}`;
}

function renderSelector(name: string, labels: readonly string[], matchers: object): string {
  const parts = Object.entries(matchers as Record<string, Matcher<string> | undefined>)
    .filter((entry): entry is [string, Matcher<string>] => entry[1] !== undefined)
    .map(([label, matcher]) => renderMatcher(label, matcher));
  if (labels.includes('environment')) parts.push(ENVIRONMENT_MATCHER);
  parts.push(INSTANCE_MATCHER, LOCATION_MATCHER);
  return `${name}{${parts.join(', ')}}`;
}

/**
 * A selector for one of the monitor's metrics, filtered by the dashboard's `environment` (when
 * the metric has that label) and `instance` variables plus the given typed matchers.
 */
export function select<D extends MetricDefinition>(
  definition: D,
  matchers: Matchers<D> = {},
): string {
  return renderSelector(definition.name, definition.labels, matchers);
}

/** Like {@link select}, for one of a histogram's `_bucket`, `_sum` or `_count` series. */
export function selectHistogram<D extends HistogramDefinition>(
  definition: D,
  series: 'bucket' | 'sum' | 'count',
  matchers: Matchers<D> = {},
): string {
  return renderSelector(`${definition.name}_${series}`, definition.labels, matchers);
}

/** A selector for one of prom-client's default metrics of the monitor's own scrape job. */
export function selectRuntime(
  name: (typeof RUNTIME_METRICS)[keyof typeof RUNTIME_METRICS],
): string {
  return `${name}{job=${quote(MONITOR_JOB)}, ${INSTANCE_MATCHER}, ${LOCATION_MATCHER}}`;
}

/** The monitor's scrape health, as the `IsaMonitorDown` alert sees it. */
export function selectMonitorUp(): string {
  return `${PROMETHEUS_METRICS.up}{job=${quote(MONITOR_JOB)}, ${INSTANCE_MATCHER}, ${LOCATION_MATCHER}}`;
}

/**
 * Firing alerts of the monitor's rules (all named `Isa…`; the always-firing `Watchdog` is left
 * out). Alerts about the monitor itself carry no `environment`, so the empty value also matches.
 */
export function selectFiringAlerts(): string {
  return `${PROMETHEUS_METRICS.alerts}{alertstate="firing", alertname=~"Isa.+", environment=~"${VARIABLES.environment}|"}`;
}

/** `increase()` of a selector over a window, e.g. `VARIABLES.interval` or `30d`. */
export function increase(selector: string, window: string): string {
  return `increase(${selector}[${window}])`;
}

/** `rate()` of a selector over a window. */
export function rate(selector: string, window: string): string {
  return `rate(${selector}[${window}])`;
}

/** Mean of a histogram per group: rate of `_sum` over rate of `_count`, NaN (a gap) when empty. */
export function histogramMean<D extends HistogramDefinition>(
  definition: D,
  by: readonly string[],
  window: string,
  matchers: Matchers<D> = {},
): string {
  const group = by.join(', ');
  const sum = rate(selectHistogram(definition, 'sum', matchers), window);
  const count = rate(selectHistogram(definition, 'count', matchers), window);
  return `sum by (${group}) (${sum}) / sum by (${group}) (${count})`;
}
