/**
 * Runs the daemon's real metrics code on a fake clock and scrapes it: the registry of
 * `src/metrics/registry.ts`, the Recorder of `src/metrics/recorder.ts`, and the exposition text
 * the registry renders for `/metrics`. Each scrape applies the events that finished by then and
 * reads the rendered text, so the rule tests see what Prometheus would store, not a model of it.
 *
 * What Prometheus adds itself is added here: the `job` and `instance` target labels, `up`, stale
 * markers after a failed scrape (none while the monitor is `cut` off), and (with `le_style:
 * prometheus3`) Prometheus 3's `le` spelling. Default process metrics are off for determinism;
 * the one the rules read, `process_start_time_seconds`, is the fake process's start: scenario
 * time 0.
 */
import { createMetrics, metricsEnvironmentOf } from '../../src/metrics/registry.js';
import { Recorder } from '../../src/metrics/recorder.js';
import {
  environmentConfigs,
  controlEvents,
  environmentEvents,
  monitorEvents,
  type RecordedEvent,
} from './check-results.js';
import {
  monitorTimeline,
  scenarioMinutes,
  scenarioMonitors,
  type Scenario,
  type ScenarioFile,
  type Target,
} from './scenarios.js';
import {
  expositionReader,
  normaliseLe,
  type SeriesIdentity,
  type Series,
} from './series-encoding.js';
import { CHECK_LIST } from '../../src/checks/index.js';

/** Sample names a rules file reads: only those can change a rule's result. */
export function namesReadByRules(rulesText: string): Set<string> {
  return new Set(rulesText.match(/[a-zA-Z_:][a-zA-Z0-9_:]*/g) ?? []);
}

/**
 * The input series of one scenario at `scrapeSeconds` resolution, from the real recorder: one
 * monitor, or one per location (each its own registry, target and state).
 * `keep` picks the sample names to write (the rest would only make promtool slower).
 */
export async function recordSeries(
  scenario: Scenario,
  scrapeSeconds: number,
  target: ScenarioFile['target'],
  keep: (name: string) => boolean,
): Promise<Series[]> {
  const series: Series[] = [];
  for (const one of scenarioMonitors(scenario, target)) {
    series.push(...(await recordMonitor(one.monitor, scrapeSeconds, one.target, keep, one)));
  }
  return series;
}

/** The input series of one monitor of a scenario, scraped at `target`. */
async function recordMonitor(
  scenario: Scenario,
  scrapeSeconds: number,
  target: Target,
  keep: (name: string) => boolean,
  where: { location?: string; control?: string } = {},
): Promise<Series[]> {
  const minutes = scenarioMinutes(scenario);
  const monitor = monitorTimeline(scenario);
  const environments = Object.entries(scenario.environments);
  const configs = environmentConfigs(scenario.environments);
  // Series exist only for the checks an environment runs, as in the daemon.
  const metrics = createMetrics({
    checks: CHECK_LIST,
    environments: configs.map((env) => metricsEnvironmentOf(env, CHECK_LIST)),
    build: { version: '0.0.0', revision: 'test', nodejs: process.version },
    collectDefaultMetrics: false,
    location: where.location ?? null,
    control: where.control !== undefined,
  });
  const recorder = new Recorder(metrics);
  for (const env of configs) recorder.describeEnvironment(env);
  // Stable sort: events of the same second keep their timeline order.
  const events: RecordedEvent[] = [
    ...monitorEvents(scenario.ledger, minutes),
    ...controlEvents(where.control, minutes),
    ...environments.flatMap(([name, spec]) => environmentEvents(name, spec, minutes)),
  ].sort((a, b) => a.at - b.at);

  // Only the families the rules read are rendered: rendering is the slow part of a long scenario.
  // Listed at every render: a family may join the registry later (the control probe's success
  // gauge joins at the first probe).
  const families = () =>
    metrics.registry
      .getMetricsAsArray()
      .map((m) => m.name)
      .filter((name) => ['', '_bucket', '_count', '_sum'].some((suffix) => keep(name + suffix)));
  const render = async () =>
    (
      await Promise.all(families().map((name) => metrics.registry.getSingleMetricAsString(name)))
    ).join('\n');

  const scrapes = Math.floor((minutes * 60) / scrapeSeconds) + 1;
  const read = expositionReader(keep);
  const byIdentity = new Map<SeriesIdentity, Series>();
  let current: ReturnType<ReturnType<typeof expositionReader>> = [];
  let next = 0;
  for (let i = 0; i < scrapes; i++) {
    const t = i * scrapeSeconds;
    const before = next;
    for (; next < events.length && (events[next]?.at ?? Infinity) <= t; next++) {
      events[next]?.record(recorder);
    }
    // The text only changes when something was recorded.
    if (i === 0 || next !== before) current = read(await render());
    const state = monitor[Math.min(Math.floor(t / 60), minutes - 1)] ?? 'up';
    // Cut off: no sample and no staleness marker arrives for any series of the monitor.
    if (state === 'cut') for (const series of byIdentity.values()) series.values[i] = undefined;
    if (state !== 'up') continue;
    for (const sample of current) {
      let series = byIdentity.get(sample.series);
      if (!series) {
        const labels: Record<string, string> = { ...sample.series.labels, ...target };
        if (labels['le'] !== undefined) labels['le'] = normaliseLe(labels['le'], scenario.le_style);
        const values = Array<number | null>(scrapes).fill(null);
        series = { metric: sample.series.name, labels, values };
        byIdentity.set(sample.series, series);
      }
      series.values[i] = sample.value;
    }
  }

  const up: Series = { metric: 'up', labels: { ...target }, values: [] };
  // The process's metrics are in the daemon's registry, so the config's `location` is on them
  // too; only `up` comes from Prometheus alone.
  const started: Series = {
    metric: 'process_start_time_seconds',
    labels: { ...target, ...(where.location !== undefined && { location: where.location }) },
    values: [],
  };
  for (let i = 0; i < scrapes; i++) {
    const state = monitor[Math.min(Math.floor((i * scrapeSeconds) / 60), minutes - 1)] ?? 'up';
    up.values.push({ up: 1, down: 0, absent: null, cut: undefined }[state]);
    started.values.push({ up: 0, down: null, absent: null, cut: undefined }[state]);
  }
  return [...byIdentity.values(), up, started];
}
