/**
 * The metrics renderer writes what prom-client writes, byte for byte, in both formats (but for
 * values in seconds, which it writes to the microsecond), while it keeps the label text of series
 * between scrapes: values that change, series that appear and disappear, a gauge set with its
 * labels in another order, label values that need escaping, default labels, and collected
 * (process) metrics.
 */
import {
  Counter,
  Gauge,
  Histogram,
  Registry,
  type Metric,
  type RegistryContentType,
} from 'prom-client';
import { describe, expect, it } from 'vitest';
import { Recorder } from '../../src/metrics/recorder.js';
import {
  MetricsRenderer,
  secondsText,
  type ExpositionFormat,
} from '../../src/server/exposition.js';
import { lifecycleResult, pingResult, testMetrics } from '../metrics/fixtures.js';
import { toMicroseconds } from '../support/microseconds.js';

/**
 * What prom-client renders for `registry` in `format` (on a copy: it renames counters in place),
 * with every value of a metric in seconds rounded to the microsecond by decimal rounding.
 */
async function promClient(
  registry: Registry<RegistryContentType>,
  format: ExpositionFormat,
): Promise<string> {
  return toMicroseconds(await promClientAsIs(registry, format));
}

async function promClientAsIs(
  registry: Registry<RegistryContentType>,
  format: ExpositionFormat,
): Promise<string> {
  if (format === 'prometheus') return registry.metrics();
  const names = registry.getMetricsAsArray().map((metric) => [metric, metric.name] as const);
  const copy = new Registry<RegistryContentType>();
  copy.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
  const labels = (registry as unknown as { _defaultLabels: object })._defaultLabels;
  copy.setDefaultLabels(labels);
  for (const [metric] of names) copy.registerMetric(metric as unknown as Metric<string>);
  try {
    return await copy.metrics();
  } finally {
    for (const [metric, name] of names) (metric as { name: string }).name = name;
  }
}

function smallRegistry(): {
  registry: Registry<RegistryContentType>;
  counter: Counter<string>;
  gauge: Gauge<string>;
  histogram: Histogram<string>;
} {
  const registry = new Registry<RegistryContentType>();
  const counter = new Counter({
    name: 'demo_requests_total',
    help: 'Requests with a "quoted" \\ help\nover two lines.',
    labelNames: ['environment', 'code'],
    registers: [registry],
  });
  const gauge = new Gauge({
    name: 'demo_last_seconds',
    help: 'Last.',
    labelNames: ['environment', 'level'],
    registers: [registry],
  });
  const histogram = new Histogram({
    name: 'demo_duration_seconds',
    help: 'Durations.',
    labelNames: ['environment', 'phase'],
    buckets: [0.005, 0.1, 1],
    registers: [registry],
  });
  new Gauge({
    name: 'demo_collected',
    help: 'Set on collection.',
    registers: [registry],
    collect() {
      this.set(7);
    },
  });
  new Counter({
    name: 'demo_plain',
    help: 'A counter named without _total.',
    registers: [registry],
  }).inc(2);
  return { registry, counter, gauge, histogram };
}

describe('MetricsRenderer', () => {
  for (const format of ['prometheus', 'openmetrics'] as const) {
    it(`renders ${format} exactly as prom-client does, scrape after scrape`, async () => {
      const { registry, counter, gauge, histogram } = smallRegistry();
      const renderer = new MetricsRenderer(registry);
      const same = async () =>
        expect(await renderer.render(format)).toBe(await promClient(registry, format));

      counter.inc({ environment: 'a "b"\\c\nd', code: '200' });
      histogram.zero({ environment: 'prod', phase: 'connect' });
      await same();
      counter.inc({ environment: 'prod', code: '500' }, 3);
      histogram.observe({ environment: 'prod', phase: 'connect' }, 0.05);
      histogram.observe({ environment: 'prod', phase: 'tls' }, 2.5);
      gauge.set({ environment: 'prod', level: 'warning' }, NaN);
      await same();
      // Another labels object, keys in another order: prom-client writes the new order.
      gauge.set({ level: 'warning', environment: 'prod' }, Infinity);
      gauge.set({ environment: 'prod', level: 'critical' }, -Infinity);
      await same();
      gauge.remove({ environment: 'prod', level: 'critical' });
      histogram.observe({ environment: 'prod', phase: 'connect' }, 0.0001);
      await same();
      registry.setDefaultLabels({ location: 'eu-1', environment: 'overridden-by-series' });
      await same();
    });
  }

  it('renders the monitor registry as prom-client does, and leaves it unchanged', async () => {
    const metrics = testMetrics();
    const recorder = new Recorder(metrics);
    const renderer = new MetricsRenderer(metrics.registry);
    recorder.recordResult(pingResult('ok'));
    expect(await renderer.render('openmetrics')).toBe(
      await promClient(metrics.registry, 'openmetrics'),
    );
    recorder.recordResult(pingResult('timeout'));
    recorder.recordResult(lifecycleResult('success'));
    expect(await renderer.render('prometheus')).toBe(
      await promClient(metrics.registry, 'prometheus'),
    );
    // An OpenMetrics scrape does not rename the counters of the next text scrape.
    expect(await renderer.render('prometheus')).toContain('# TYPE isa_ping_attempts_total counter');
  });

  it('writes values in seconds to the microsecond, and every other value as it is', async () => {
    const { registry, counter, gauge, histogram } = smallRegistry();
    const renderer = new MetricsRenderer(registry);
    histogram.observe({ environment: 'prod', phase: 'connect' }, 0.1);
    histogram.observe({ environment: 'prod', phase: 'connect' }, 0.2);
    gauge.set({ environment: 'prod', level: 'a' }, 0.001679377999999815);
    gauge.set({ environment: 'prod', level: 'b' }, 1795696719.598);
    gauge.set({ environment: 'prod', level: 'c' }, 0.0000004);
    gauge.set({ environment: 'prod', level: 'd' }, 0.0000005000001);
    counter.inc({ environment: 'prod', code: '200' }, 0.1);
    counter.inc({ environment: 'prod', code: '200' }, 0.2);
    const text = await renderer.render('prometheus');
    expect(text).toContain('demo_duration_seconds_sum{environment="prod",phase="connect"} 0.3\n');
    expect(text).toContain('demo_last_seconds{environment="prod",level="a"} 0.001679\n');
    expect(text).toContain('demo_last_seconds{environment="prod",level="b"} 1795696719.598\n');
    expect(text).toContain('demo_last_seconds{environment="prod",level="c"} 0\n');
    expect(text).toContain('demo_last_seconds{environment="prod",level="d"} 0.000001\n');
    // Not in seconds: written as prom-client writes it, noise and all.
    expect(text).toContain(`demo_requests_total{environment="prod",code="200"} ${0.1 + 0.2}\n`);
    expect(0.1 + 0.2).not.toBe(0.3);
    // The unrounded text is what prom-client writes.
    expect(await promClientAsIs(registry, 'prometheus')).toContain(
      'phase="connect"} 0.30000000000000004',
    );
  });

  it('never writes a growing sum in seconds smaller than before', () => {
    let sum = 0;
    let previous = -1;
    for (let i = 0; i < 20_000; i++) {
      sum += 0.000_123_456_7 * ((i % 7) + 1) + 1e-9;
      const written = Number(secondsText(sum));
      expect(written).toBeGreaterThanOrEqual(previous);
      expect(Math.abs(written - sum)).toBeLessThanOrEqual(5e-7);
      previous = written;
    }
  });
});
