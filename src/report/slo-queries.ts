/**
 * An objective's error ratio over a window, as Sloth writes it for each SLI kind, and the
 * maintenance clause of its 5-minute slices (docs/alerts.md, "Objectives"). The rules' generator
 * and `report --slo` build their queries here, so the report counts as the rules do.
 */
import type { Objective } from './sloth-spec.js';

/** Sloth's window variable, spaces allowed inside the braces. */
const WINDOW = /\{\{ *\.window *\}\}/g;

/** A query of the spec with its `{{.window}}` filled in. */
export function overWindow(query: string, window: string): string {
  return query.replace(WINDOW, window).trim();
}

/** events: error ÷ total (a window without events has no ratio); raw: the error ratio query. */
export function errorRatio(slo: Objective, window: string): string {
  if (slo.sli.kind === 'raw') return `(${overWindow(slo.sli.errorRatioQuery, window)})`;
  return [
    `(${overWindow(slo.sli.errorQuery, window)})`,
    '/',
    `(${overWindow(slo.sli.totalQuery, window)} > 0)`,
  ].join('\n');
}

/**
 * The environments whose maintenance window touched the last `window`: a slice of theirs is left
 * out. A series without an `environment` label matches none and is always kept.
 */
export function inMaintenance(window: string): string {
  return `max by (environment) (max_over_time(isa_maintenance_active{job="isa-monitor"}[${window}])) == 1`;
}

/** The 5-minute slice the period averages: the error ratio, outside maintenance windows. */
export function sliceErrorRatio(slo: Objective): string {
  return [errorRatio(slo, '5m'), 'unless on (environment)', inMaintenance('5m')].join('\n');
}
