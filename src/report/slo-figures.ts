/**
 * Every objective of a spec, computed from its own queries over the report's range (docs/cli.md,
 * "Objectives of the spec"): the error ratio of each 5-minute slice, as the objectives'
 * `slo:sli_error:ratio_rate5m` rule records it (events: error ÷ total; raw: the error ratio query),
 * slices without events and slices touched by a maintenance window left out, and the range's error
 * ratio the average of the slices, as the rules' 30-day period is.
 */
import { budgetRemaining } from './objectives.js';
import type { PrometheusClient, RangeSeries } from './prometheus.js';
import { errorRatio, sliceErrorRatio } from './slo-queries.js';
import { sloId, type Objective, type SloSpec } from './sloth-spec.js';

const SLICE = 300;

/** One series the objective's queries return (e.g. one per environment). */
export interface SloSeriesFigure {
  labels: Record<string, string>;
  sli: number | null;
  error_budget_remaining: number | null;
  /** 5-minute slices counted: with events, outside maintenance. */
  slices: number;
  /** Slices with events left out because a maintenance window touched them. */
  slices_in_maintenance: number;
}

/** One objective of the spec, with how it was counted. */
export interface SloFigure {
  id: string;
  service: string;
  name: string;
  /** Ratio, e.g. 0.995. */
  objective: number;
  sli_type: 'events' | 'raw';
  counted: string;
  series: SloSeriesFigure[];
}

/** How an objective is counted, in words the report prints beside it. */
function counting(slo: Objective): string {
  const ratio =
    slo.sli.kind === 'events'
      ? 'error_query ÷ total_query per 5-minute slice (slices without events left out)'
      : 'error_ratio_query per 5-minute slice';
  return `${ratio}, {{.window}} = 5m; slices touched by a maintenance window left out; the range's error ratio is the average of its slices`;
}

/** The objectives of every spec over [from, to], one query pair per objective. */
export async function sloFigures(
  client: PrometheusClient,
  specs: readonly SloSpec[],
  from: number,
  to: number,
): Promise<SloFigure[]> {
  const figures: SloFigure[] = [];
  for (const spec of specs) {
    for (const slo of spec.slos) {
      // The first slice ends 5 minutes after --from: each point covers the 5 minutes before it.
      const start = Math.min(from + SLICE, to);
      const kept = await client.queryRange(sliceErrorRatio(slo), start, to, SLICE);
      const all = await client.queryRange(errorRatio(slo, '5m'), start, to, SLICE);
      figures.push({
        id: sloId(spec, slo),
        service: spec.service,
        name: slo.name,
        objective: slo.objective / 100,
        sli_type: slo.sli.kind,
        counted: counting(slo),
        series: seriesFigures(kept, all, slo.objective / 100),
      });
    }
  }
  return figures;
}

function seriesFigures(
  kept: readonly RangeSeries[],
  all: readonly RangeSeries[],
  objective: number,
): SloSeriesFigure[] {
  const key = (labels: Record<string, string>) => JSON.stringify(Object.entries(labels).sort());
  const counted = new Map(kept.map((s) => [key(s.labels), s]));
  return all
    .map((s) => {
      const points = (counted.get(key(s.labels))?.points ?? []).filter(([, v]) =>
        Number.isFinite(v),
      );
      const errorRatio =
        points.length === 0 ? null : points.reduce((sum, [, v]) => sum + v, 0) / points.length;
      const sli = errorRatio === null ? null : round(1 - errorRatio);
      return {
        labels: s.labels,
        sli,
        error_budget_remaining: round(budgetRemaining(sli, objective)),
        slices: points.length,
        slices_in_maintenance: s.points.length - points.length,
      };
    })
    .sort((a, b) => (key(a.labels) < key(b.labels) ? -1 : 1));
}

function round(value: number | null): number | null {
  if (value === null || !Number.isFinite(value)) return null;
  return Math.round(value * 1e6) / 1e6;
}

/** The table of the spec's objectives the Markdown and HTML forms print, and how each counted. */
export function sloTable(slos: readonly SloFigure[]): {
  header: string[];
  rows: string[][];
  notes: string[];
} {
  const pct = (v: number | null, digits: number) =>
    v === null ? 'n/a' : `${(v * 100).toFixed(digits)} %`;
  const rows = slos.flatMap((slo) =>
    (slo.series.length === 0 ? [null] : slo.series).map((s) => [
      slo.id,
      s === null
        ? '(no data)'
        : Object.entries(s.labels)
            .map(([k, v]) => `${k}=${v}`)
            .join(', ') || '(all)',
      pct(slo.objective, 3),
      pct(s?.sli ?? null, 3),
      pct(s?.error_budget_remaining ?? null, 1),
      s === null ? '0' : `${s.slices} (${s.slices_in_maintenance} in maintenance)`,
    ]),
  );
  return {
    header: ['Objective', 'Series', 'Target', 'Measured', 'Error budget remaining', '5-min slices'],
    rows,
    notes: slos.map((slo) => `${slo.id} (${slo.sli_type}): ${slo.counted}`),
  };
}
