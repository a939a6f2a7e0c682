/**
 * Hand-built check Results (the plain data the runner produces) and small readers of registry
 * values, shared by the metrics, server and golden tests.
 */
import type { Registry, RegistryContentType } from 'prom-client';
import type { CheckResult } from '../../src/kernel/check.js';
import { T0 } from '../../src/checks/shared/fixtures.js';
import { Recorder } from '../../src/metrics/recorder.js';
import {
  createMetrics,
  type Metrics,
  type MetricsEnvironment,
} from '../../src/metrics/registry.js';
import { BUILD } from '../support/build.js';
import { CHECK_FIXTURES } from '../support/check-fixtures.js';
import { testEnvironment } from '../support/harness.js';
import { CHECK_LIST } from '../../src/checks/index.js';

export { T0 };
export { pingResult } from '../../src/checks/ping/fixtures.js';
export { BUILD };
export { lifecycleResult } from '../../src/checks/lifecycle/fixtures.js';

/** An environment with every registered check enabled. */
export function environment(name: string): MetricsEnvironment {
  return { name };
}

/**
 * A registry for production and sandbox, without process metrics (keeps tests deterministic)
 * unless `processMetrics` asks for the daemon's full set.
 */
export function testMetrics(
  names: string[] = ['production', 'sandbox'],
  opts: { processMetrics?: boolean } = {},
): Metrics {
  const metrics = createMetrics({
    checks: CHECK_LIST,
    environments: names.map(environment),
    build: BUILD,
    collectDefaultMetrics: opts.processMetrics ?? false,
    // Every family registered: the control probe's too.
    control: true,
  });
  // The configuration gauges, as the daemon sets them at start-up (ping every 60 s, with
  // confirmation pings on as by default).
  const recorder = new Recorder(metrics);
  for (const name of names) {
    recorder.describeEnvironment(
      testEnvironment('http://127.0.0.1:9', {
        name,
        ping: {
          intervalMs: 60_000,
          confirm: { intervalMs: 10_000, windowMs: 180_000, successes: 3 },
        },
      }),
    );
  }
  return metrics;
}

export { CHECK_FIXTURES };

/** Every registered check's sample results in `environment`, in registry order. */
export function sampleResults(environment: string): CheckResult[] {
  return CHECK_FIXTURES.flatMap(({ fixtures }) => fixtures.sampleResults(environment));
}

type AnyRegistry = Registry<RegistryContentType>;

/** The value of one sample (`sample` defaults to the metric name), or undefined when absent. */
export async function sampleValue(
  registry: AnyRegistry,
  name: string,
  labels: Record<string, string | number>,
  sample: string = name,
): Promise<number | undefined> {
  const samples = await samplesOf(registry, name);
  const found = samples.find(
    (s) => (s.metricName ?? name) === sample && sameLabels(s.labels, labels),
  );
  return found?.value;
}

/** Every sample of a metric, as prom-client's JSON gives them. */
export async function samplesOf(
  registry: AnyRegistry,
  name: string,
): Promise<Array<{ metricName?: string; labels: Record<string, string | number>; value: number }>> {
  const all = await registry.getMetricsAsJSON();
  const metric = all.find((m) => m.name === name);
  if (metric === undefined) throw new Error(`metric ${name} not registered`);
  return metric.values as Array<{
    metricName?: string;
    labels: Record<string, string | number>;
    value: number;
  }>;
}

function sameLabels(a: Record<string, string | number>, b: Record<string, string | number>) {
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => String(a[k]) === String(b[k]));
}
