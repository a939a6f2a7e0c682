/**
 * From counter values at step points to what happened in each step, and from the pings of each
 * step to availability and incidents (docs/cli.md, "report": definitions and precision). Pure:
 * no I/O, numbers in seconds.
 */
import type { RangeSeries } from './prometheus.js';
import { labelKey } from './prometheus.js';

/** Counter growth per group (its labels) and per step interval. */
export type StepGroups = Map<string, { labels: Record<string, string>; deltas: Float64Array }>;

/**
 * Per group (the labels `by` picks), per interval between consecutive `times`, what the counters
 * grew by: interval i (0-based) is (times[i], times[i+1]]. Each series is differenced on its own,
 * so a reset (a restart: the value drops) counts the new value as growth, as Prometheus's
 * increase() does; the first point of a series is its baseline; an interval without a point adds
 * nothing, and the growth over a gap lands in the first interval after it. Points at other times
 * are ignored.
 */
export function counterSteps(
  series: readonly RangeSeries[],
  times: readonly number[],
  by: readonly string[],
): StepGroups {
  const index = new Map(times.map((t, i) => [t, i]));
  const n = Math.max(0, times.length - 1);
  const groups: StepGroups = new Map();
  for (const s of series) {
    const labels = Object.fromEntries(by.map((name) => [name, s.labels[name] ?? '']));
    const key = labelKey(labels);
    let group = groups.get(key);
    if (!group) {
      group = { labels, deltas: new Float64Array(n) };
      groups.set(key, group);
    }
    let last: number | null = null;
    for (const [t, v] of s.points) {
      const k = index.get(t);
      if (k === undefined || !Number.isFinite(v)) continue;
      if (last !== null && k >= 1) {
        group.deltas[k - 1] = (group.deltas[k - 1] ?? 0) + (v >= last ? v - last : v);
      }
      last = v;
    }
  }
  return groups;
}

/** `from`, `from + step`, ... up to `to`, and `to` itself when the steps do not reach it. */
export function stepTimes(from: number, to: number, step: number): number[] {
  const times: number[] = [];
  for (let t = from; t <= to; t += step) times.push(t);
  if (times[times.length - 1] !== to) times.push(to);
  return times;
}

/** Per interval (times[i], times[i+1]]: 1 when the gauge was 1 at its start, times[i]. */
export function gaugeAtStepStarts(
  series: readonly RangeSeries[],
  times: readonly number[],
): Uint8Array {
  const index = new Map(times.map((t, i) => [t, i]));
  const out = new Uint8Array(Math.max(0, times.length - 1));
  for (const s of series) {
    for (const [t, v] of s.points) {
      const k = index.get(t);
      if (v >= 1 && k !== undefined && k < out.length) out[k] = 1;
    }
  }
  return out;
}

/**
 * The coarse intervals that hold a fine step in maintenance, as [a, b) ranges of coarse interval
 * indices, consecutive ones merged: where the counters read at the coarse step must be read again
 * at the fine one. Every coarse time must be one of the fine times; `maintenance` is per fine step.
 */
export function maintenanceSpans(
  coarseTimes: readonly number[],
  fineTimes: readonly number[],
  maintenance: Uint8Array,
): Array<[number, number]> {
  const bounds = fineBounds(coarseTimes, fineTimes);
  const spans: Array<[number, number]> = [];
  for (let j = 0; j + 1 < coarseTimes.length; j++) {
    if (!maintenance.subarray(bounds[j], bounds[j + 1]).includes(1)) continue;
    const last = spans[spans.length - 1];
    if (last && last[1] === j) last[1] = j + 1;
    else spans.push([j, j + 1]);
  }
  return spans;
}

/**
 * The coarse groups with the fine steps in maintenance left out: a coarse interval that holds a
 * step in maintenance takes instead the growth of its fine steps outside maintenance (`fine`,
 * read at the fine step over at least those intervals); the others keep their coarse growth.
 * Every coarse time must be one of the fine times; `maintenance` is per fine step.
 */
export function withoutMaintenance(
  coarse: StepGroups,
  coarseTimes: readonly number[],
  fine: StepGroups,
  fineTimes: readonly number[],
  maintenance: Uint8Array,
): StepGroups {
  const bounds = fineBounds(coarseTimes, fineTimes);
  const n = Math.max(0, coarseTimes.length - 1);
  const out: StepGroups = new Map();
  for (const [key, group] of [...coarse, ...fine]) {
    if (!out.has(key)) {
      out.set(key, {
        labels: group.labels,
        deltas: Float64Array.from(coarse.get(key)?.deltas ?? new Float64Array(n)),
      });
    }
  }
  for (let j = 0; j < n; j++) {
    const a = bounds[j] ?? 0;
    const b = bounds[j + 1] ?? a;
    if (!maintenance.subarray(a, b).includes(1)) continue;
    for (const [key, group] of out) {
      const deltas = fine.get(key)?.deltas;
      let sum = 0;
      for (let k = a; k < b; k++) if (maintenance[k] !== 1) sum += deltas?.[k] ?? 0;
      group.deltas[j] = sum;
    }
  }
  return out;
}

/** The index among `fineTimes` of each coarse time. */
function fineBounds(coarseTimes: readonly number[], fineTimes: readonly number[]): number[] {
  const index = new Map(fineTimes.map((t, i) => [t, i]));
  return coarseTimes.map((t) => {
    const i = index.get(t);
    if (i === undefined) throw new Error(`coarse time ${t} is not a fine time`);
    return i;
  });
}

/** What the pings of one step interval were: how many of each result. */
export type StepPings = ReadonlyMap<string, number>;

export interface Incident {
  start: number;
  /** Null while it was still going on at the end of the range. */
  end: number | null;
  duration_seconds: number;
  cause: string;
}

export interface PingFigures {
  pings: number;
  failed_pings: number;
  maintenance_seconds: number;
  availability: number | null;
  incidents: Incident[];
}

/**
 * Availability and incidents from the pings of each step interval. A step in maintenance is left
 * out of everything, and ends an incident that is going on at its start. A step whose pings all
 * failed starts or continues an incident; a step with a successful ping ends it (its end is that
 * step's start: the next successful ping, to the step); a step without pings changes nothing.
 * An incident's cause is its most frequent failure result, the first seen on a tie.
 */
export function pingFigures(
  steps: ReadonlyArray<StepPings>,
  maintenance: Uint8Array,
  times: readonly number[],
  failures: ReadonlySet<string>,
): PingFigures {
  const end = times[times.length - 1] ?? 0;
  let maintenanceSeconds = 0;
  let pings = 0;
  let failed = 0;
  const incidents: Incident[] = [];
  let open: { start: number; causes: Map<string, number> } | null = null;
  const close = (at: number | null): void => {
    if (!open) return;
    let cause = '';
    let most = 0;
    for (const [result, count] of open.causes) {
      if (count > most) [cause, most] = [result, count];
    }
    incidents.push({
      start: open.start,
      end: at,
      duration_seconds: (at ?? end) - open.start,
      cause,
    });
    open = null;
  };
  steps.forEach((results, i) => {
    const at = times[i] ?? end;
    if (maintenance[i] === 1) {
      maintenanceSeconds += (times[i + 1] ?? at) - at;
      close(at);
      return;
    }
    let total = 0;
    let bad = 0;
    for (const [result, count] of results) {
      total += count;
      if (failures.has(result)) bad += count;
    }
    pings += total;
    failed += bad;
    if (total === 0) return;
    if (bad < total) {
      close(at);
      return;
    }
    open ??= { start: at, causes: new Map() };
    for (const [result, count] of results) {
      if (count > 0) open.causes.set(result, (open.causes.get(result) ?? 0) + count);
    }
  });
  close(null);
  return {
    pings: Math.round(pings),
    failed_pings: Math.round(failed),
    maintenance_seconds: maintenanceSeconds,
    availability: pings > 0 ? 1 - failed / pings : null,
    incidents,
  };
}

/**
 * The q-quantile of a cumulative histogram, as PromQL's histogram_quantile computes it: linear
 * within the bucket the rank falls in, the lower bound of the first bucket 0, the largest finite
 * bound when the rank falls in +Inf. Null without observations.
 */
export function histogramQuantile(
  q: number,
  buckets: ReadonlyArray<{ le: number; count: number }>,
): number | null {
  const sorted = [...buckets].sort((a, b) => a.le - b.le);
  const last = sorted[sorted.length - 1];
  if (!last || last.le !== Infinity || !(last.count > 0)) return null;
  const rank = q * last.count;
  for (let i = 0; i < sorted.length; i++) {
    const b = sorted[i];
    if (!b || b.count < rank) continue;
    if (b.le === Infinity) return sorted[i - 1]?.le ?? null;
    const lower = i === 0 ? 0 : (sorted[i - 1]?.le ?? 0);
    const below = i === 0 ? 0 : (sorted[i - 1]?.count ?? 0);
    const inBucket = b.count - below;
    if (inBucket <= 0) return b.le;
    return lower + (b.le - lower) * ((rank - below) / inBucket);
  }
  return null;
}
