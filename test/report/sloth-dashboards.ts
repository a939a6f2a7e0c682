/**
 * The panel queries of Sloth's two Grafana dashboards (docs/alerts.md, "Sloth's UI and
 * dashboards"), as grafana.com exports them, with their variables:
 * - 14643 "High level Sloth SLOs" and 14348 "SLO / Detail", read in the public repository
 *   canonical/sloth-k8s-operator at `src/grafana_dashboards/sloth-overview.json` (`gnetId` 14643,
 *   Grafana 8 export) and `src/grafana_dashboards/sloth-slo.json` (`gnetId` 14348, Grafana 8.3
 *   export), commit 27e86fa (August 2026); an earlier 14348 (Grafana 7.5) is in
 *   ghazal-naderi/platform-11 `k8s/sloth/grafana-dashboard.yaml`, with the same queries less the
 *   `sloth_slo_info` stat and the month chart's ideal line. slok/sloth itself holds no dashboard JSON.
 * Only the PromQL of each target is listed; panels are named by their title or, for untitled
 * stats, their legend. `$service`, `$slo`, `$sli_window`, `$min_burning_rate` and Grafana's
 * `${__to:date:M}` (the month of the range's end) are left as written for {@link substitute}.
 */

export interface PanelQuery {
  dashboard: '14643' | '14348';
  panel: string;
  expr: string;
  /** Grafana runs it as an instant query (else as a range query over the dashboard's range). */
  instant: boolean;
  /** The dashboard's template variables the query uses. */
  perObjective: boolean;
}

const burnAbove = 'slo:current_burn_rate:ratio > ${min_burning_rate}';
const sel = 'sloth_service="${service}", sloth_slo="${slo}"';
const selTight = 'sloth_service="${service}",sloth_slo="${slo}"';
const monthBudget = [
  '1-(sum_over_time((',
  `slo:sli_error:ratio_rate1h{${selTight}}`,
  ' * on() group_left() (month() == bool vector(${__to:date:M}))',
  ')[32d:1h]) / on(sloth_id) (',
  `slo:error_budget:ratio{${selTight}} *on() group_left() (24 * days_in_month())`,
  '))',
].join('');

const q = (
  dashboard: PanelQuery['dashboard'],
  panel: string,
  expr: string,
  instant: boolean,
): PanelQuery => ({ dashboard, panel, expr, instant, perObjective: expr.includes('${slo}') });

/** Every target of both dashboards, in panel order. */
export const DASHBOARD_QUERIES: readonly PanelQuery[] = [
  q('14643', 'SLOs (stat)', 'count(sloth_slo_info)', false),
  q('14643', 'Services (stat)', 'count(max(sloth_slo_info) by (sloth_service))', false),
  q('14643', 'Avg burn rate (stat)', 'avg(slo:current_burn_rate:ratio)', false),
  q(
    '14643',
    'Warning alerts (stat)',
    'max(ALERTS{sloth_id!="",sloth_severity="ticket"}) OR on() vector(0)',
    false,
  ),
  q(
    '14643',
    'Critical alerts (stat)',
    'max(ALERTS{sloth_id!="",sloth_severity="page"}) OR on() vector(0)',
    false,
  ),
  q('14643', 'All burning rate (filtered)', burnAbove, false),
  q('14643', 'Current exceeded burning rate SLOs', burnAbove, true),
  q('14643', 'SLOs burn rate state timeline', 'slo:current_burn_rate:ratio', false),
  q('14643', 'Budget remaining 30 day window', 'slo:period_error_budget_remaining:ratio', true),
  q('14348', 'Exceeded burning rate SLOs', burnAbove, true),
  q('14348', 'All burning rate (filtered)', burnAbove, false),
  q('14348', 'Objective (stat)', `slo:objective:ratio{${sel}}`, true),
  q(
    '14348',
    'SLI (SLI per $sli_window)',
    `1 - (max(slo:sli_error:ratio_rate\${sli_window}{${sel}}) OR on() vector(0))`,
    false,
  ),
  q('14348', 'SLI (objective line)', `slo:objective:ratio{${sel}}`, false),
  q('14348', 'Objective % (stat, sloth_slo_info)', `sloth_slo_info{${sel}}`, true),
  q(
    '14348',
    'Current burning budget % (stat)',
    `slo:current_burn_rate:ratio{${sel}} or on() vector(0)`,
    true,
  ),
  q('14348', 'Remaining error budget (month) (stat)', monthBudget, true),
  q(
    '14348',
    'Remaining error budget (30d window) (stat)',
    `slo:period_error_budget_remaining:ratio{${sel}} or on() vector(1)`,
    true,
  ),
  q('14348', 'Month error budget burn chart', monthBudget, false),
  q(
    '14348',
    'Month error budget burn chart (ideal consumption)',
    '1 - sum_over_time(((1 / (days_in_month() * 24)) * (month() == bool vector(${__to:date:M})))[32d:1h])',
    false,
  ),
  q('14348', 'Burn rate (speed) magnitude', `slo:current_burn_rate:ratio{${sel}} > 0`, false),
  q(
    '14348',
    'Warning alert (stat)',
    `max(ALERTS{${sel}, sloth_severity="ticket"}) OR on() vector(0)`,
    true,
  ),
  q(
    '14348',
    'Critical alert (stat)',
    `max(ALERTS{${sel}, sloth_severity="page"}) or on() vector(0)`,
    true,
  ),
];

/** The template variables' queries (Grafana `label_values`): the 14348 service and slo pickers. */
export const VARIABLE_QUERIES = {
  service: { match: 'slo:objective:ratio', label: 'sloth_service' },
  slo: { match: 'slo:objective:ratio{sloth_service="${service}"}', label: 'sloth_slo' },
} as const;

/** The SLI windows 14348 offers in `$sli_window`. */
export const SLI_WINDOWS = ['5m', '30m', '1h', '2h', '6h', '1d', '3d', '30d'] as const;

/** `expr` with the dashboard's variables given their values (`${name}` and `$name` forms). */
export function substitute(expr: string, values: Readonly<Record<string, string>>): string {
  return expr.replace(/\$\{([a-z_:]+)\}|\$([a-z_]+)/gi, (whole, braced?: string, bare?: string) => {
    const name = braced ?? bare ?? '';
    const value = values[name];
    if (value === undefined) throw new Error(`no value for ${whole} in ${expr}`);
    return value;
  });
}
