/**
 * Renders one prom-client Registry in either exposition format without touching the registry.
 *
 * Why not `registry.metrics()`:
 * - prom-client 15's `Registry.metrics()` in OpenMetrics mode renames every counter in place
 *   (`metric.name = name without _total`), so one OpenMetrics scrape would permanently drop
 *   `_total` from the next Prometheus-text scrape, and two concurrent scrapes in different formats
 *   would race on the shared content type. This renderer never writes to a metric.
 * - At 1000 environments the registry holds some 100 000 samples, and prom-client rebuilds every
 *   sample's label text on every scrape (a histogram's buckets as a fresh object each): about a
 *   second per scrape on a loaded 2-core machine. Here the text of a series' labels is built once
 *   and kept, so a scrape only formats the numbers (bench/README.md, scale mode).
 *
 * The output is byte for byte what prom-client writes (test/server/exposition.test.ts compares
 * them) but for one thing: a value in seconds is written to the microsecond (`SECONDS`). Plain
 * counters, gauges and histograms are read from prom-client's per-series store (`hashMap`;
 * prom-client is pinned to an exact version for this); metrics with a `collect` function (the
 * process and Node.js collectors) go through their public `get()`, as prom-client does.
 * Exemplars are not rendered: the monitor enables none.
 */
import { Registry, type RegistryContentType } from 'prom-client';

export type ExpositionFormat = 'prometheus' | 'openmetrics';

/** Content-Type of each format, as prom-client writes them. */
export const CONTENT_TYPES: Readonly<Record<ExpositionFormat, RegistryContentType>> = {
  prometheus: Registry.PROMETHEUS_CONTENT_TYPE,
  openmetrics: Registry.OPENMETRICS_CONTENT_TYPE,
};

/**
 * Media types offered for negotiation, parameters included: `negotiator` only matches an
 * `Accept` entry carrying `version=...` against an offer carrying the same parameter. The first
 * offer is the default for a missing or wildcard `Accept`.
 */
export const OFFERED_MEDIA_TYPES = [
  'text/plain; version=0.0.4',
  'text/plain',
  'application/openmetrics-text; version=1.0.0',
  'application/openmetrics-text; version=0.0.1',
  'application/openmetrics-text',
] as const;

/** The format for a negotiated media type (false or unknown: Prometheus text, the lenient default). */
export function formatFor(mediaType: string | false): ExpositionFormat {
  return typeof mediaType === 'string' && mediaType.startsWith('application/openmetrics-text')
    ? 'openmetrics'
    : 'prometheus';
}

type Labels = Record<string, string | number>;

/** What prom-client keeps per series of a counter or gauge, and of a histogram. */
interface ValueEntry {
  labels: Labels;
  value: number;
}
interface HistogramEntry {
  labels: Labels;
  bucketValues: Record<string, number>;
  sum: number;
  count: number;
}

/** The parts of a prom-client metric this renderer reads. */
interface StoredMetric {
  name: string;
  help: string;
  type: string;
  hashMap?: Record<string, ValueEntry | HistogramEntry>;
  upperBounds?: number[];
  collect?: unknown;
  enableExemplars?: boolean;
  get(): Promise<MetricData>;
  getForPromString?(): Promise<MetricData>;
}

interface MetricData {
  values?: Array<{
    labels?: Labels;
    sharedLabels?: Labels;
    value: number;
    metricName?: string;
  }>;
}

/** The kept text of one series: the sample lines up to (and including) the space before the value. */
interface SeriesText {
  labels: Labels;
  heads: string[];
}

/**
 * Renders a registry's metrics. Keep one per registry: it holds the label text of every series it
 * has rendered, dropping that of series the registry no longer has.
 */
export class MetricsRenderer {
  /**
   * Per metric, the sample name its text was written with and the text of each series. Sample
   * lines are the same in both formats (a counter's samples end in `_total` in each), so one
   * text serves both.
   */
  private kept = new WeakMap<object, { sample: string; series: Map<string, SeriesText> }>();
  /** The default labels the kept text was written with. */
  private keptDefaults = 'null';

  constructor(private readonly registry: Registry<RegistryContentType>) {}

  /** The metrics of the registry in `format`; the registry itself is never modified. */
  async render(format: ExpositionFormat): Promise<string> {
    const openMetrics = format === 'openmetrics';
    const defaults = defaultLabelsOf(this.registry);
    if (JSON.stringify(defaults) !== this.keptDefaults) {
      this.kept = new WeakMap();
      this.keptDefaults = JSON.stringify(defaults);
    }
    const families: string[] = [];
    for (const metric of this.registry.getMetricsAsArray() as unknown as StoredMetric[]) {
      // OpenMetrics declares a counter family without `_total`; its samples carry it.
      const family =
        openMetrics && metric.type === 'counter' ? metric.name.replace(/_total$/, '') : metric.name;
      const sample = openMetrics && metric.type === 'counter' ? `${family}_total` : metric.name;
      const lines = [
        `# HELP ${escapeString(family)} ${escapeString(metric.help)}`,
        `# TYPE ${escapeString(family)} ${metric.type}`,
      ];
      if (isStored(metric)) this.storedSamples(metric, sample, defaults, lines);
      else await collectedSamples(metric, sample, defaults, lines);
      families.push(lines.join('\n'));
    }
    return openMetrics ? `${families.join('\n')}\n# EOF\n` : `${families.join('\n\n')}\n`;
  }

  /** Samples of a counter, gauge or histogram from its store, with their label text kept. */
  private storedSamples(
    metric: StoredMetric & { hashMap: Record<string, ValueEntry | HistogramEntry> },
    sample: string,
    defaults: Labels | null,
    lines: string[],
  ): void {
    let forMetric = this.kept.get(metric);
    if (forMetric === undefined || forMetric.sample !== sample) {
      forMetric = { sample, series: new Map() };
      this.kept.set(metric, forMetric);
    }
    const kept = forMetric.series;
    const histogram = metric.type === 'histogram';
    const bounds = metric.upperBounds ?? [];
    const format = SECONDS.test(metric.name) ? secondsText : valueText;
    let series = 0;
    for (const hash in metric.hashMap) {
      series++;
      const entry = metric.hashMap[hash]!;
      let text = kept.get(hash);
      // A gauge's series gets a new labels object on every set; same labels, same text.
      if (text === undefined || (text.labels !== entry.labels && !sameLabels(text, entry.labels))) {
        text = {
          labels: entry.labels,
          heads: histogram
            ? histogramHeads(sample, bounds, entry.labels, defaults)
            : [`${sample}${labelText(entry.labels, {}, defaults)} `],
        };
        kept.set(hash, text);
      } else {
        text.labels = entry.labels;
      }
      if (!histogram) {
        lines.push(text.heads[0]! + format((entry as ValueEntry).value));
        continue;
      }
      const { bucketValues, sum, count } = entry as HistogramEntry;
      let cumulative = 0;
      for (let i = 0; i < bounds.length; i++) {
        cumulative += bucketValues[bounds[i]!]!;
        lines.push(text.heads[i]! + valueText(cumulative));
      }
      lines.push(text.heads[bounds.length]! + valueText(count));
      lines.push(text.heads[bounds.length + 1]! + format(sum));
      lines.push(text.heads[bounds.length + 2]! + valueText(count));
    }
    // Series removed from the registry (a replaced gauge series) leave the cache too.
    if (kept.size > series) {
      for (const hash of kept.keys()) if (!(hash in metric.hashMap)) kept.delete(hash);
    }
  }
}

/** True for the metrics whose values this renderer reads from prom-client's store. */
function isStored(
  metric: StoredMetric,
): metric is StoredMetric & { hashMap: Record<string, ValueEntry | HistogramEntry> } {
  return (
    typeof metric.hashMap === 'object' &&
    metric.hashMap !== null &&
    metric.collect === undefined &&
    metric.enableExemplars !== true &&
    (metric.type === 'counter' ||
      metric.type === 'gauge' ||
      (metric.type === 'histogram' && Array.isArray(metric.upperBounds)))
  );
}

/** The heads of a histogram series: each bucket, +Inf, _sum and _count. */
function histogramHeads(
  sample: string,
  bounds: readonly number[],
  labels: Labels,
  defaults: Labels | null,
): string[] {
  const heads = bounds.map((le) => `${sample}_bucket${labelText({ le }, labels, defaults)} `);
  heads.push(`${sample}_bucket${labelText({ le: '+Inf' }, labels, defaults)} `);
  heads.push(`${sample}_sum${labelText({}, labels, defaults)} `);
  heads.push(`${sample}_count${labelText({}, labels, defaults)} `);
  return heads;
}

/** Samples of a metric that computes its values on collection (process and Node.js metrics). */
async function collectedSamples(
  metric: StoredMetric,
  sample: string,
  defaults: Labels | null,
  lines: string[],
): Promise<void> {
  const data = metric.getForPromString ? await metric.getForPromString() : await metric.get();
  const counter = metric.type === 'counter';
  const format = SECONDS.test(metric.name) ? secondsText : valueText;
  for (const value of data.values ?? []) {
    // prom-client appends `_total` to a counter's own sample name only (never to a histogram's).
    const name = value.metricName ?? sample;
    const own = value.labels ?? {};
    lines.push(
      `${counter ? sample : name}${labelText(own, value.sharedLabels ?? {}, defaults)} ${format(value.value)}`,
    );
  }
}

/**
 * A sample's label text as prom-client writes it: the sample's own labels (a histogram bucket's
 * `le`) followed by the registry's default labels, each unless the series has it, then the
 * series' labels; `{}` is left out.
 */
function labelText(own: Labels, series: Labels, defaults: Labels | null): string {
  const merged = defaults === null ? own : { ...own, ...defaults, ...own };
  const parts: string[] = [];
  for (const [name, value] of Object.entries(merged)) {
    if (!Object.prototype.hasOwnProperty.call(series, name)) parts.push(labelPair(name, value));
  }
  for (const [name, value] of Object.entries(series)) parts.push(labelPair(name, value));
  return parts.length > 0 ? `{${parts.join(',')}}` : '';
}

function labelPair(name: string, value: string | number): string {
  const text = typeof value === 'string' ? escapeString(value).replace(/"/g, '\\"') : value;
  return `${name}="${text}"`;
}

function sameLabels(text: SeriesText, labels: Labels): boolean {
  const a = Object.keys(text.labels);
  const b = Object.keys(labels);
  return (
    a.length === b.length && a.every((key, i) => key === b[i] && text.labels[key] === labels[key])
  );
}

/** A sample value as prom-client writes it (its `NaN` spelling `Nan` included). */
function valueText(value: number): string {
  if (Number.isNaN(value)) return 'Nan';
  if (!Number.isFinite(value)) return value < 0 ? '-Inf' : '+Inf';
  return `${value}`;
}

/**
 * Metrics whose unit is the second (Prometheus names carry the unit). Their values are written to
 * the microsecond: the monitor's clocks resolve no finer, and a duration read as the difference of
 * two clock readings, or summed, carries binary noise in its last digits
 * (`0.001679377999999815`), which made such a sample twice as long; at 1000 environments that
 * noise was 70 kB of `/metrics`. Rounding is monotonic, so a sum or a counter never goes back.
 */
const SECONDS = /_seconds(_total)?$/;

/** A value in seconds, to the microsecond, in its shortest spelling (`0.001679`). */
export function secondsText(value: number): string {
  // Integers (counts, whole-second gauges) need nothing; past 2^53 µs (285 years) the scaling
  // itself would lose digits, so such a value is written as it is.
  if (Number.isInteger(value) || !(Math.abs(value) < MAX_SAFE_MICROSECONDS)) {
    return valueText(value);
  }
  return valueText(Math.round(value * 1e6) / 1e6);
}
const MAX_SAFE_MICROSECONDS = Number.MAX_SAFE_INTEGER / 1e6;

function escapeString(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

/** The registry's default labels (`setDefaultLabels`), null when there are none. */
function defaultLabelsOf(registry: Registry<RegistryContentType>): Labels | null {
  const labels = (registry as unknown as { _defaultLabels?: Labels })._defaultLabels;
  return labels !== undefined && Object.keys(labels).length > 0 ? labels : null;
}

/** The metrics of `registry` in `format`, rendered once (no label text kept between calls). */
export function renderMetrics(
  registry: Registry<RegistryContentType>,
  format: ExpositionFormat,
): Promise<string> {
  return new MetricsRenderer(registry).render(format);
}
