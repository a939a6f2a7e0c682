/**
 * Renders one prom-client Registry in either exposition format without touching the registry.
 *
 * Why not `registry.setContentType()` per request: prom-client 15's `Registry.metrics()` in
 * OpenMetrics mode renames every counter in place (`metric.name = name without _total`), so one
 * OpenMetrics scrape would permanently drop `_total` from the next Prometheus-text scrape, and two
 * concurrent scrapes in different formats would race on the shared content type. Instead each
 * request renders through a throwaway Registry of the wanted format whose entries are read-only
 * views of the real metrics: same values, names of their own.
 */
import { Registry, type Metric, type MetricObject, type RegistryContentType } from 'prom-client';
import { defaultLabelsOf } from '../metrics/registry.js';

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

/** The metrics of `registry` in `format`; the registry itself is never modified. */
export async function renderMetrics(
  registry: Registry<RegistryContentType>,
  format: ExpositionFormat,
): Promise<string> {
  // Throwaway, so setting its content type races with nothing.
  const view = new Registry<RegistryContentType>();
  view.setContentType(CONTENT_TYPES[format]);
  // The `location` label is the registry's default label: the view renders it too.
  view.setDefaultLabels({ ...defaultLabelsOf(registry) });
  for (const metric of registry.getMetricsAsArray()) {
    view.registerMetric(readOnlyView(metric) as unknown as Metric<string>);
  }
  return view.metrics();
}

/** The part of a prom-client metric the Registry's renderer uses. */
interface RenderableMetric {
  name: string;
  type?: string;
  get(): Promise<{ name: string }>;
  getForPromString?(): Promise<{ name: string }>;
}

function readOnlyView(metric: MetricObject): RenderableMetric {
  const real = metric as unknown as RenderableMetric;
  const view: RenderableMetric = {
    // The rendering Registry may rename this (OpenMetrics counters); only the view changes.
    name: real.name,
    get: async () => {
      // Histograms render from getForPromString (unsplayed buckets); the others from get().
      const data = real.getForPromString ? await real.getForPromString() : await real.get();
      return { ...data, name: view.name };
    },
  };
  if (real.type !== undefined) view.type = real.type;
  return view;
}
