/**
 * What Sloth's UI shows of the objectives in a Prometheus: the queries its backend issues, and what
 * it makes of their answers (docs/alerts.md, "Sloth's UI and dashboards").
 *
 * The query strings are those of the slok/sloth repository, read at commit 0e395d8 (April 2026):
 * - `internal/http/backend/storage/prometheus/cache.go`: the instant queries of its cache refresh
 *   (`refreshCaches`: the base data, SLI windows, SLO period, grouping and current burn rate,
 *   alerts and period budget hydraters, in that order);
 * - `internal/http/backend/storage/prometheus/prometheus.go`: the availability range query of
 *   an SLO's chart (`getSLIAvailabilityInRange`) and its step (`GetSLIAvailabilityInRangeAutoStep`);
 * - the metric and label names they are built from: `pkg/common/conventions/slo.go`.
 * The interpretation below is written for this test after reading those files, not taken from them.
 */

/** The instant queries of the UI backend's cache refresh, in the order it issues them. */
export const UI_INSTANT_QUERIES = {
  /** Every objective with its service, name, objective and Sloth's metadata. */
  info: 'sloth_slo_info{sloth_id!=""}',
  /** The SLI windows each objective records, from the suffix of the recorded names. */
  windows: 'count({__name__=~"^slo:sli_error:ratio_rate.*"}) by (__name__, sloth_id)',
  /** The period, in days. */
  period: 'max(slo:time_period:days{sloth_id!=""}) by (sloth_id)',
  /** The burn rate now, and the labels an objective is split by (grouped SLOs). */
  currentBurn: 'slo:current_burn_rate:ratio{sloth_id!=""}',
  /** Firing burn-rate alerts, by `sloth_severity`. */
  alerts: 'ALERTS{sloth_id!=""}',
  /** The budget left over the period; the UI shows 1 minus it, the budget burned. */
  budget: 'slo:period_error_budget_remaining:ratio{sloth_id!=""}',
} as const;

/**
 * The chart of one objective: `1 - (max(<shortest SLI window>{<labels>}))`, labels in Prometheus's
 * order (sorted by name), ranged with the window as the step.
 */
export function availabilityQuery(
  metric: string,
  labels: Readonly<Record<string, string>>,
): string {
  const filter = Object.keys(labels)
    .sort()
    .map((k) => `${k}=${JSON.stringify(labels[k])}`)
    .join(', ');
  return `1 - (max(${metric}{${filter}}))`;
}

/** Labels Sloth's backend never splits an objective by (its `NonGroupingLabels`). */
const NOT_GROUPING = [
  'sloth_slo',
  'sloth_id',
  'sloth_service',
  'sloth_window',
  'sloth_severity',
  'sloth_version',
  'sloth_mode',
  'sloth_spec',
  'sloth_objective',
];

/** One SLO as the UI lists it. */
export interface UiSlo {
  /** `sloth_id`, or `sloth_id:<base64url of k=v,...>` when the objective is split by labels. */
  id: string;
  slothId: string;
  service: string;
  slo: string;
  objective: number;
  /** Sorted by duration, as recorded: `5m`, `30m`, ... */
  windows: string[];
  periodDays: number | undefined;
  groupLabels: Record<string, string>;
  /** `slo:current_burn_rate:ratio` (the UI shows it × 100 as "burning budget"). */
  burningCurrent: number;
  /** 1 − `slo:period_error_budget_remaining:ratio` (× 100: "budget burned on the period"). */
  burnedPeriod: number | undefined;
  firingAlerts: string[];
}

type Answer = Array<{ metric: Record<string, string>; value: [number, string] }>;

/** Sloth's Prometheus duration suffixes, in seconds. */
export function windowSeconds(w: string): number {
  const match = /^(\d+)([smhdwy])$/.exec(w);
  if (!match) throw new Error(`not a Prometheus duration: ${w}`);
  const unit = { s: 1, m: 60, h: 3600, d: 86400, w: 604800, y: 31536000 }[match[2] as 's'];
  return Number(match[1]) * unit;
}

/** The id Sloth gives a grouped SLO: Go's `base64.URLEncoding` (padded) of `k=v` pairs. */
function groupedId(slothId: string, labels: Record<string, string>): string {
  const pairs = Object.entries(labels)
    .map(([k, v]) => `${k}=${v}`)
    .sort()
    .join(',');
  const b64 = Buffer.from(pairs).toString('base64').replaceAll('+', '-').replaceAll('/', '_');
  return `${slothId}:${b64}`;
}

/** The objectives of `info`, ungrouped, with the labels each may not be split by. */
function baseSlos(info: Answer): Map<string, UiSlo & { notGrouping: Set<string> }> {
  const slos = new Map<string, UiSlo & { notGrouping: Set<string> }>();
  for (const { metric } of info) {
    const slothId = metric['sloth_id'] ?? '';
    if (slothId === '') continue;
    slos.set(slothId, {
      id: slothId,
      slothId,
      service: metric['sloth_service'] ?? '',
      slo: metric['sloth_slo'] ?? '',
      objective: Number(metric['sloth_objective']),
      windows: [],
      periodDays: undefined,
      groupLabels: {},
      burningCurrent: 0,
      burnedPeriod: undefined,
      firingAlerts: [],
      notGrouping: new Set([...NOT_GROUPING, ...Object.keys(metric)]),
    });
  }
  return slos;
}

/** The labels of `metric` an objective is split by: those its `sloth_slo_info` does not have. */
function groupOf(metric: Record<string, string>, notGrouping: Set<string>): Record<string, string> {
  return Object.fromEntries(Object.entries(metric).filter(([k]) => !notGrouping.has(k)));
}

/**
 * The SLOs Sloth's UI lists, from the answers to {@link UI_INSTANT_QUERIES} run by `query` (an
 * instant query at the moment the UI refreshes).
 */
export async function slothUiSlos(query: (expr: string) => Promise<Answer>): Promise<UiSlo[]> {
  const base = baseSlos(await query(UI_INSTANT_QUERIES.info));
  for (const { metric } of await query(UI_INSTANT_QUERIES.windows)) {
    const slo = base.get(metric['sloth_id'] ?? '');
    slo?.windows.push((metric['__name__'] ?? '').replace('slo:sli_error:ratio_rate', ''));
  }
  for (const slo of base.values()) slo.windows.sort((a, b) => windowSeconds(a) - windowSeconds(b));
  for (const { metric, value } of await query(UI_INSTANT_QUERIES.period)) {
    const slo = base.get(metric['sloth_id'] ?? '');
    if (slo) slo.periodDays = Number(value[1]);
  }
  const listed = new Map<string, UiSlo>([...base].map(([id, slo]) => [id, slo]));
  for (const { metric, value } of await query(UI_INSTANT_QUERIES.currentBurn)) {
    const slo = base.get(metric['sloth_id'] ?? '');
    if (!slo) continue;
    const burning = Number.isNaN(Number(value[1])) ? 0 : Number(value[1]);
    const group = groupOf(metric, slo.notGrouping);
    if (Object.keys(group).length === 0) {
      slo.burningCurrent = burning;
      continue;
    }
    listed.delete(slo.slothId);
    slo.groupLabels = group;
    const id = groupedId(slo.slothId, group);
    listed.set(id, { ...slo, id, groupLabels: group, burningCurrent: burning, firingAlerts: [] });
  }
  await hydrateBudgetsAndAlerts(query, base, listed);
  return [...listed.values()].sort((a, b) => a.id.localeCompare(b.id));
}

/** The period budget and the firing alerts of each listed SLO, found by its group labels. */
async function hydrateBudgetsAndAlerts(
  query: (expr: string) => Promise<Answer>,
  base: ReadonlyMap<string, UiSlo & { notGrouping: Set<string> }>,
  listed: ReadonlyMap<string, UiSlo>,
): Promise<void> {
  // As the backend does: the values of the objective's group label names, read from the sample.
  const find = (metric: Record<string, string>): UiSlo | undefined => {
    const slothId = metric['sloth_id'] ?? '';
    const keys = Object.keys(base.get(slothId)?.groupLabels ?? {});
    const group: Record<string, string> = {};
    for (const k of keys) if (metric[k] !== undefined) group[k] = metric[k];
    return listed.get(keys.length === 0 ? slothId : groupedId(slothId, group));
  };
  for (const { metric, value } of await query(UI_INSTANT_QUERIES.budget)) {
    const slo = find(metric);
    if (slo) slo.burnedPeriod = 1 - Number(value[1]);
  }
  for (const { metric } of await query(UI_INSTANT_QUERIES.alerts)) {
    if (metric['alertstate'] !== 'firing') continue;
    find(metric)?.firingAlerts.push(`${metric['alertname']} ${metric['sloth_severity']}`);
  }
}

/**
 * The step and recorded window of the UI's chart over `rangeSeconds`: the longest SLI window
 * shorter than a 120th of the range, else the shortest (`GetSLIAvailabilityInRangeAutoStep`).
 */
export function chartWindow(windows: readonly string[], rangeSeconds: number): string {
  const ideal = rangeSeconds / 120;
  let step = windows[0] ?? '';
  for (const w of windows) {
    if (windowSeconds(w) >= ideal) break;
    step = w;
  }
  return step;
}
