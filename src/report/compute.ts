/**
 * The report's figures from a Prometheus-compatible API (docs/cli.md, "report"). Counters are read
 * as raw values at step points and differenced here, per series: exact counts at any step, resets
 * handled, and no server-side increase() whose extrapolation or window would blur one ping.
 *
 * - Pings: isa_ping_attempts_total at a step of the ping interval (isa_ping_interval_seconds), so
 *   each step holds the ping of one interval; that is the precision of incidents.
 * - Histograms and lifecycle runs: at a step of an hour (a whole number of ping intervals, or the
 *   ping interval when longer), summed per day for the HTML charts and over the range for the
 *   figures. The hours that hold a ping interval in maintenance are read again at the ping step,
 *   and the intervals in maintenance left out, as they are of the pings.
 */
import type { Objectives } from './objectives.js';
import { budgetRemaining } from './objectives.js';
import { ReportError, type PrometheusClient, type RangeSeries } from './prometheus.js';
import { sloFigures, type SloFigure } from './slo-figures.js';
import type { SloSpec } from './sloth-spec.js';
import {
  counterSteps,
  gaugeAtStepStarts,
  histogramQuantile,
  maintenanceSpans,
  pingFigures,
  stepTimes,
  withoutMaintenance,
  type Incident,
  type StepGroups,
} from './steps.js';

/** Ping results that are failures of the API (as the ping-availability objective counts them). */
export const FAILED_PING_RESULTS: ReadonlySet<string> = new Set([
  'server_error',
  'timeout',
  'network_error',
  'unexpected_status',
  'invalid_body',
]);
/** Lifecycle runs that ended for our own reasons (key, traffic, budget): left out of the ratio. */
export const OWN_LIFECYCLE_RESULTS: ReadonlySet<string> = new Set([
  'unauthorized',
  'rate_limited',
  'budget',
]);
/** Used when a monitor exports no isa_ping_interval_seconds: the default ping interval. */
const DEFAULT_PING_INTERVAL = 60;
const HISTOGRAM_STEP = 3600;

export interface Quantiles {
  p50: number | null;
  p95: number | null;
  p99: number | null;
}

export interface ObjectiveFigure {
  name: string;
  objective: number;
  sli: number | null;
  error_budget_remaining: number | null;
}

export interface DayFigures {
  date: string;
  availability: number | null;
  pings: number;
  failed_pings: number;
  maintenance_seconds: number;
  latency_seconds: Quantiles;
}

export interface Figures {
  availability: number | null;
  pings: number;
  failed_pings: number;
  maintenance_seconds: number;
  latency_seconds: Quantiles;
  lifecycle: { runs: number; success_ratio: number | null };
  qualify_seconds: { p50: number | null; p95: number | null };
  error_budget_remaining: number | null;
  objectives: ObjectiveFigure[];
  incidents: Array<Omit<Incident, 'start' | 'end'> & { start: string; end: string | null }>;
  days: DayFigures[];
}

export interface EnvironmentReport extends Figures {
  environment: string;
  ping_interval_seconds: number;
  locations?: Array<{ location: string } & Figures>;
}

export interface Report {
  from: string;
  to: string;
  environments: EnvironmentReport[];
  /** Every objective of the spec, from its own queries (docs/cli.md, "Objectives of the spec"). */
  slos?: SloFigure[];
}

export interface ReportRequest {
  /** Seconds since the epoch. */
  from: number;
  to: number;
  environment?: string;
  objectives: Objectives;
  /** The spec's documents: each objective is computed from its queries. */
  specs?: readonly SloSpec[];
}

export async function buildReport(
  client: PrometheusClient,
  request: ReportRequest,
): Promise<Report> {
  const { from, to } = request;
  const envSelector =
    request.environment === undefined ? '' : `environment=${promString(request.environment)}`;
  // The environments and their ping intervals; the second half finds a monitor that exports
  // no interval gauge. Every 5 minutes: within Prometheus's lookback, so no environment is missed.
  const found = await client.queryRange(
    `max by (environment) (isa_ping_interval_seconds{${envSelector}}) or max by (environment) (0 * isa_ping_attempts_total{${envSelector}})`,
    from,
    to,
    300,
  );
  const intervals = new Map<string, number>();
  for (const s of found) {
    const name = s.labels['environment'];
    if (name === undefined) continue;
    const last = [...s.points].reverse().find(([, v]) => v > 0)?.[1];
    intervals.set(name, last ?? intervals.get(name) ?? DEFAULT_PING_INTERVAL);
  }
  const slos = await sloFigures(client, request.specs ?? [], from, to);
  // A spec of another service's objectives is reported without isa-monitor's own series; a
  // named environment, or objectives without a single slice of data, still need them.
  const sloData = slos.some((slo) => slo.series.some((series) => series.slices > 0));
  if (intervals.size === 0 && (request.environment !== undefined || !sloData)) {
    throw new ReportError(
      `no isa_ping_attempts_total series between ${iso(from)} and ${iso(to)}` +
        (request.environment === undefined ? '' : ` for environment "${request.environment}"`),
    );
  }
  const environments: EnvironmentReport[] = [];
  for (const [name, interval] of [...intervals].sort(([a], [b]) => (a < b ? -1 : 1))) {
    environments.push(await environmentReport(client, request, name, interval));
  }
  return { from: iso(from), to: iso(to), environments, slos };
}

/** An environment's figures, overall and (when its series name locations) per location. */
async function environmentReport(
  client: PrometheusClient,
  request: ReportRequest,
  environment: string,
  interval: number,
): Promise<EnvironmentReport> {
  const series = await readEnvironment(client, request, environment, interval);
  const locations = [
    ...new Set([...series.attempts.values()].map((g) => g.labels['location'] ?? '')),
  ].sort();
  const report: EnvironmentReport = {
    environment,
    ping_interval_seconds: interval,
    ...figuresFor(series, request.objectives, null),
  };
  if (locations.some((l) => l !== '')) {
    report.locations = locations.map((location) => ({
      location,
      ...figuresFor(series, request.objectives, location),
    }));
  }
  return report;
}

/** A histogram or counter read hourly, and again at the ping step over hours in maintenance. */
interface CoarseAndFine {
  coarse: StepGroups;
  fine: StepGroups;
}

/** What the report reads of one environment. */
interface EnvironmentSeries {
  /** Step times at the ping interval, and hourly (a whole number of ping intervals). */
  pingTimes: number[];
  coarseTimes: number[];
  attempts: StepGroups;
  maintenance: RangeSeries[];
  durations: CoarseAndFine;
  lifecycle: CoarseAndFine;
  qualify: CoarseAndFine;
  /** The warning latency threshold at the end of the range. */
  warning: RangeSeries[];
}

/** The grid the coarse-and-fine reads share. */
interface ReadGrid {
  from: number;
  to: number;
  interval: number;
  pingTimes: number[];
  coarse: number;
  coarseTimes: number[];
  /** The hours holding a ping interval in maintenance at any location, as coarse step indexes. */
  spans: Array<[number, number]>;
}

async function readEnvironment(
  client: PrometheusClient,
  request: ReportRequest,
  environment: string,
  interval: number,
): Promise<EnvironmentSeries> {
  const { from, to } = request;
  const sel = `environment=${promString(environment)}`;
  const pingTimes = stepTimes(from, to, interval);
  // A whole number of ping intervals, so that every coarse time is a ping step time and an hour
  // in maintenance can be read again at the ping step.
  const coarse = interval * Math.max(1, Math.round(HISTOGRAM_STEP / interval));
  const coarseTimes = stepTimes(from, to, coarse);

  const attempts = counterSteps(
    await rangeAt(client, `isa_ping_attempts_total{${sel}}`, pingTimes, interval),
    pingTimes,
    ['location', 'result'],
  );
  const maintenance = await rangeAt(
    client,
    `max by (location) (isa_maintenance_active{${sel}})`,
    pingTimes,
    interval,
  );
  const spans = maintenanceSpans(coarseTimes, pingTimes, gaugeAtStepStarts(maintenance, pingTimes));
  const grid: ReadGrid = { from, to, interval, pingTimes, coarse, coarseTimes, spans };
  const byBucket = ['location', 'le'];
  return {
    pingTimes,
    coarseTimes,
    attempts,
    maintenance,
    durations: await readCoarseAndFine(
      client,
      grid,
      `isa_ping_duration_seconds_bucket{${sel}}`,
      byBucket,
    ),
    lifecycle: await readCoarseAndFine(client, grid, `isa_lifecycle_runs_total{${sel}}`, [
      'location',
      'result',
    ]),
    qualify: await readCoarseAndFine(
      client,
      grid,
      `isa_qualify_duration_seconds_bucket{${sel}}`,
      byBucket,
    ),
    warning: await client.queryRange(
      `max by (location) (isa_latency_threshold_seconds{${sel},level="warning"})`,
      to,
      to,
      interval,
    ),
  };
}

async function readCoarseAndFine(
  client: PrometheusClient,
  grid: ReadGrid,
  expr: string,
  by: readonly string[],
): Promise<CoarseAndFine> {
  const { pingTimes, coarseTimes } = grid;
  const fine: RangeSeries[] = [];
  for (const [a, b] of grid.spans) {
    const times = pingTimes.slice(
      pingTimes.indexOf(coarseTimes[a] ?? grid.from),
      pingTimes.indexOf(coarseTimes[b] ?? grid.to) + 1,
    );
    fine.push(...(await rangeAt(client, expr, times, grid.interval)));
  }
  return {
    coarse: counterSteps(await rangeAt(client, expr, coarseTimes, grid.coarse), coarseTimes, by),
    fine: counterSteps(fine, pingTimes, by),
  };
}

type LabelFilter = (labels: Record<string, string>) => boolean;

/** Series of one location, or of all when `location` is null. */
function inLocationOf(location: string | null): LabelFilter {
  return (labels) => location === null || labels['location'] === location;
}

/** The figures of one location (or all, for null), with its intervals in maintenance left out. */
function figuresFor(
  series: EnvironmentSeries,
  objectives: Objectives,
  location: string | null,
): Figures {
  const { pingTimes, coarseTimes } = series;
  const inLocation = inLocationOf(location);
  const maintenance = gaugeAtStepStarts(
    series.maintenance.filter(
      (s) =>
        location === null || (s.labels['location'] ?? '') === location || !s.labels['location'],
    ),
    pingTimes,
  );
  const steps = pingResultSteps(series.attempts, inLocation, pingTimes);
  const pings = pingFigures(steps, maintenance, pingTimes, FAILED_PING_RESULTS);
  const outside = (read: CoarseAndFine) =>
    withoutMaintenance(read.coarse, coarseTimes, read.fine, pingTimes, maintenance);
  const latency = outside(series.durations);
  const latencyBuckets = bucketsBetween(latency, inLocation, 0, coarseTimes.length - 1);
  const threshold = series.warning
    .filter((s) => inLocation(s.labels))
    .map((s) => s.points[s.points.length - 1]?.[1])
    .find((v) => v !== undefined);
  const { runs, successRatio } = lifecycleRuns(outside(series.lifecycle), inLocation);
  const qualifyBuckets = bucketsBetween(
    outside(series.qualify),
    inLocation,
    0,
    coarseTimes.length - 1,
  );
  return {
    availability: round(pings.availability, 6),
    pings: pings.pings,
    failed_pings: pings.failed_pings,
    maintenance_seconds: pings.maintenance_seconds,
    latency_seconds: quantiles(latencyBuckets),
    lifecycle: { runs, success_ratio: round(successRatio, 6) },
    qualify_seconds: {
      p50: round(histogramQuantile(0.5, qualifyBuckets), 4),
      p95: round(histogramQuantile(0.95, qualifyBuckets), 4),
    },
    error_budget_remaining: round(
      budgetRemaining(pings.availability, objectives.get('ping-availability')),
      6,
    ),
    objectives: objectiveFigures(objectives, [
      ['ping-availability', pings.availability],
      ['ping-latency', withinBound(latencyBuckets, threshold)],
      ['lifecycle-success', successRatio],
    ]),
    incidents: pings.incidents.map((i) => ({
      start: iso(i.start),
      end: i.end === null ? null : iso(i.end),
      duration_seconds: i.duration_seconds,
      cause: i.cause,
    })),
    days: days(steps, maintenance, pingTimes, latency, coarseTimes, inLocation),
  };
}

/** Per ping interval, how many pings of the selected locations ended with each result. */
function pingResultSteps(
  attempts: StepGroups,
  inLocation: LabelFilter,
  pingTimes: readonly number[],
): Array<Map<string, number>> {
  return pingTimes.slice(1).map((_, i) => {
    const results = new Map<string, number>();
    for (const g of attempts.values()) {
      if (!inLocation(g.labels)) continue;
      const d = g.deltas[i] ?? 0;
      if (d > 0) {
        const r = g.labels['result'] ?? '';
        results.set(r, (results.get(r) ?? 0) + d);
      }
    }
    return results;
  });
}

/** Lifecycle runs and their success ratio, without the runs that ended for our own reasons. */
function lifecycleRuns(
  groups: StepGroups,
  inLocation: LabelFilter,
): { runs: number; successRatio: number | null } {
  let runs = 0;
  let successes = 0;
  for (const g of groups.values()) {
    if (!inLocation(g.labels)) continue;
    const result = g.labels['result'] ?? '';
    if (OWN_LIFECYCLE_RESULTS.has(result)) continue;
    const total = g.deltas.reduce((a, b) => a + b, 0);
    runs += total;
    if (result === 'success') successes += total;
  }
  runs = Math.round(runs);
  return { runs, successRatio: runs > 0 ? Math.round(successes) / runs : null };
}

/** The objectives that have a target, each with its SLI and the error budget it leaves. */
function objectiveFigures(
  objectives: Objectives,
  slis: ReadonlyArray<readonly [string, number | null]>,
): ObjectiveFigure[] {
  return slis.flatMap(([name, sli]) => {
    const target = objectives.get(name);
    if (target === undefined) return [];
    return [
      {
        name,
        objective: target,
        sli: round(sli, 6),
        error_budget_remaining: round(budgetRemaining(sli, target), 6),
      },
    ];
  });
}

/** The points of `expr` at `times`: the aligned ones in one chunked range, the last apart. */
async function rangeAt(
  client: PrometheusClient,
  expr: string,
  times: readonly number[],
  step: number,
): Promise<RangeSeries[]> {
  const first = times[0] ?? 0;
  const last = times[times.length - 1] ?? first;
  const alignedEnd = first + Math.floor((last - first) / step) * step;
  const series = await client.queryRange(expr, first, alignedEnd, step);
  if (alignedEnd === last) return series;
  const tail = await client.queryRange(expr, last, last, step);
  const byKey = new Map(series.map((s) => [JSON.stringify(s.labels), s]));
  for (const s of tail) {
    const known = byKey.get(JSON.stringify(s.labels));
    if (known) known.points.push(...s.points);
    else series.push(s);
  }
  return series;
}

type Groups = StepGroups;

/** Cumulative buckets summed over intervals [a, b) of the groups `keep` accepts. */
function bucketsBetween(
  groups: Groups,
  keep: (labels: Record<string, string>) => boolean,
  a: number,
  b: number,
): Array<{ le: number; count: number }> {
  const byLe = new Map<number, number>();
  for (const g of groups.values()) {
    if (!keep(g.labels)) continue;
    // Number('+Inf') is NaN: the exposition spells infinity its own way.
    const le = g.labels['le'] === '+Inf' ? Infinity : Number(g.labels['le']);
    if (Number.isNaN(le)) continue;
    let sum = 0;
    for (let i = a; i < b; i++) sum += g.deltas[i] ?? 0;
    byLe.set(le, (byLe.get(le) ?? 0) + sum);
  }
  return [...byLe].map(([le, count]) => ({ le, count }));
}

function quantiles(buckets: Array<{ le: number; count: number }>): Quantiles {
  return {
    p50: round(histogramQuantile(0.5, buckets), 4),
    p95: round(histogramQuantile(0.95, buckets), 4),
    p99: round(histogramQuantile(0.99, buckets), 4),
  };
}

/** The share of observations at or under `bound` (a bucket bound), null without one. */
function withinBound(
  buckets: Array<{ le: number; count: number }>,
  bound: number | undefined,
): number | null {
  const total = buckets.find((b) => b.le === Infinity)?.count ?? 0;
  const within = buckets.find((b) => bound !== undefined && Math.abs(b.le - bound) < 1e-9);
  if (!(total > 0) || within === undefined) return null;
  return within.count / total;
}

/** Per UTC day of the range: availability from the ping steps, latency from the hourly steps. */
function days(
  steps: ReadonlyArray<ReadonlyMap<string, number>>,
  maintenance: Uint8Array,
  pingTimes: readonly number[],
  durations: Groups,
  coarseTimes: readonly number[],
  keep: (labels: Record<string, string>) => boolean,
): DayFigures[] {
  const dayOf = (t: number) => iso(t).slice(0, 10);
  const out = new Map<string, DayFigures>();
  let i = 0;
  while (i < steps.length) {
    const date = dayOf(pingTimes[i] ?? 0);
    let j = i;
    while (j < steps.length && dayOf(pingTimes[j] ?? 0) === date) j++;
    const figures = pingFigures(
      steps.slice(i, j),
      maintenance.slice(i, j),
      pingTimes.slice(i, j + 1),
      FAILED_PING_RESULTS,
    );
    out.set(date, {
      date,
      availability: round(figures.availability, 6),
      pings: figures.pings,
      failed_pings: figures.failed_pings,
      maintenance_seconds: figures.maintenance_seconds,
      latency_seconds: { p50: null, p95: null, p99: null },
    });
    i = j;
  }
  let a = 0;
  while (a < coarseTimes.length - 1) {
    const date = dayOf(coarseTimes[a] ?? 0);
    let b = a;
    while (b < coarseTimes.length - 1 && dayOf(coarseTimes[b] ?? 0) === date) b++;
    const day = out.get(date);
    if (day) day.latency_seconds = quantiles(bucketsBetween(durations, keep, a, b));
    a = b;
  }
  return [...out.values()];
}

/** A PromQL string literal. */
export function promString(value: string): string {
  return JSON.stringify(value);
}

export function iso(seconds: number): string {
  return new Date(seconds * 1000).toISOString().replace('.000Z', 'Z');
}

function round(value: number | null, digits: number): number | null {
  if (value === null || !Number.isFinite(value)) return null;
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}
