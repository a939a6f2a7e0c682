/**
 * Long stretches of recorded series for a real Prometheus: the daemon's real registry and Recorder
 * fed the CheckResults of the checks' own scenario modules on a fake clock (the rule tests' event
 * model, scripts/rules/check-results.ts), the registry's text exposition read every scrape
 * interval and written as OpenMetrics with timestamps, for `promtool tsdb create-blocks-from
 * openmetrics`. Only the families asked for are rendered: rendering is the slow part.
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import { createMetrics, metricsEnvironmentOf } from '../../src/metrics/registry.js';
import { Recorder } from '../../src/metrics/recorder.js';
import { CHECK_LIST } from '../../src/checks/index.js';
import { environmentConfigs, environmentEvents } from '../../scripts/rules/check-results.js';
import type { EnvironmentSpec } from '../../scripts/rules/scenarios.js';
import { expositionReader, seriesSelector } from '../../scripts/rules/series-encoding.js';

export interface Backfill {
  /** Unix seconds of scenario time 0. */
  start: number;
  minutes: number;
  scrapeSeconds: number;
  location: string | null;
  target: { job: string; instance: string };
  environments: Record<string, EnvironmentSpec>;
  /** Metric family names to render (without _bucket, _count, _sum). */
  families: readonly string[];
  /** The sample names to write of them (default: all). */
  samples?: (name: string) => boolean;
  /** The series to write (default: all): series that never change only make promtool slower. */
  series?: (name: string, labels: Readonly<Record<string, string>>) => boolean;
}

/**
 * promtool reads its whole input once per block it writes, so the stretch is split into files
 * of 10 days: each is read about once.
 */
const FILE_SECONDS = 10 * 86400;

/**
 * Writes the OpenMetrics files (`<prefix>-<n>.om`, one per 10 days); returns their paths and how
 * many samples they hold.
 */
export async function writeOpenMetrics(
  spec: Backfill,
  prefix: string,
): Promise<{ files: string[]; samples: number }> {
  const configs = environmentConfigs(spec.environments);
  const metrics = createMetrics({
    checks: CHECK_LIST,
    environments: configs.map((env) => metricsEnvironmentOf(env, CHECK_LIST)),
    build: { version: '0.0.0', revision: 'test', nodejs: process.version },
    collectDefaultMetrics: false,
    location: spec.location,
  });
  const recorder = new Recorder(metrics);
  for (const env of configs) recorder.describeEnvironment(env);
  const events = Object.entries(spec.environments)
    .flatMap(([name, env]) => environmentEvents(name, env, spec.minutes))
    .sort((a, b) => a.at - b.at);
  const wanted = new Set(spec.families);
  const keep = (name: string) =>
    (spec.samples?.(name) ?? true) &&
    (wanted.has(name) ||
      ['_bucket', '_count', '_sum'].some(
        (s) => name.endsWith(s) && wanted.has(name.slice(0, -s.length)),
      ));
  const render = async () =>
    (
      await Promise.all(spec.families.map((name) => metrics.registry.getSingleMetricAsString(name)))
    ).join('\n');
  const read = expositionReader(keep);
  const heads = new Map<object, string | null>();

  const files: string[] = [];
  let out: WriteStream | null = null;
  const finish = async (): Promise<void> => {
    if (!out) return;
    const stream = out;
    stream.end('# EOF\n');
    await once(stream, 'finish');
    out = null;
  };
  let samples = 0;
  let next = 0;
  // Each series' `name{labels} value` for the current values: a scrape only adds its timestamp.
  let prefixes: string[] = [];
  const scrapes = Math.floor((spec.minutes * 60) / spec.scrapeSeconds) + 1;
  let buffer: string[] = [];
  for (let i = 0; i < scrapes; i++) {
    const t = i * spec.scrapeSeconds;
    const before = next;
    for (; next < events.length && (events[next]?.at ?? Infinity) <= t; next++) {
      events[next]?.record(recorder);
    }
    if (i === 0 || next !== before) {
      prefixes = [];
      for (const { series, value } of read(await render())) {
        let head = heads.get(series);
        if (head === undefined) {
          const labels = { ...series.labels, ...spec.target };
          head =
            (spec.series?.(series.name, labels) ?? true)
              ? seriesSelector(series.name, labels)
              : null;
          heads.set(series, head);
        }
        if (head !== null) prefixes.push(`${head} ${value === Infinity ? '+Inf' : String(value)}`);
      }
    }
    if (out === null || t % FILE_SECONDS === 0) {
      if (buffer.length > 0 && out !== null) out.write(buffer.join(''));
      buffer = [];
      await finish();
      const path = `${prefix}-${files.length}.om`;
      files.push(path);
      out = createWriteStream(path);
    }
    const stamp = ` ${spec.start + t}\n`;
    if (prefixes.length > 0) buffer.push(prefixes.join(stamp) + stamp);
    samples += prefixes.length;
    if (buffer.length >= 1000) {
      const stream: WriteStream = out;
      if (!stream.write(buffer.join(''))) await once(stream, 'drain');
      buffer = [];
    }
  }
  if (out !== null) (out as WriteStream).write(buffer.join(''));
  await finish();
  return { files, samples };
}
