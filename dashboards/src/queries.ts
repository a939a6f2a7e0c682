/**
 * Every PromQL expression the dashboards send to Prometheus, as data: the tests compile them with
 * promtool and check their metric names, and the end-to-end test runs them against a real
 * Prometheus scraping a real monitor.
 */
import type { Dashboard, Panel, RowPanel } from '@grafana/grafana-foundation-sdk/dashboard';
import { DASHBOARDS } from './index.js';

/** One query of a dashboard. */
export interface DashboardQuery {
  /** Dashboard uid. */
  dashboard: string;
  /** Panel title; `annotation: <name>` or `variable: <name>` for those. */
  panel: string;
  /** The expression as Grafana stores it, with `$environment`, `$__rate_interval`, … in place. */
  expr: string;
  kind: 'panel' | 'annotation' | 'variable';
  /** Query refId within the panel (panels only). */
  refId?: string;
  /**
   * True where an empty result is a correct answer in a healthy system: annotations mark events
   * (a firing alert, a data set change) and return nothing between them.
   */
  mayBeEmpty: boolean;
}

interface PrometheusTarget {
  expr?: unknown;
  refId?: unknown;
}

function isRow(panel: Panel | RowPanel): panel is RowPanel {
  return panel.type === 'row';
}

/** Every non-row panel, including those nested in collapsed rows, in dashboard order. */
export function panelsOf(dashboard: Dashboard): Panel[] {
  const panels: Panel[] = [];
  for (const panel of dashboard.panels ?? []) {
    if (isRow(panel)) panels.push(...panel.panels);
    else panels.push(panel);
  }
  return panels;
}

/** Every row panel of a dashboard. */
export function rowsOf(dashboard: Dashboard): RowPanel[] {
  return (dashboard.panels ?? []).filter(isRow);
}

/**
 * The PromQL inside a Prometheus variable query: `label_values(<selector>, label)` and
 * `query_result(<expr>)` carry one; `label_values(label)` and `label_names()` do not.
 */
export function variablePromql(query: string): string | undefined {
  const labelValues = /^\s*label_values\(\s*(.+?)\s*,\s*[a-zA-Z_][a-zA-Z0-9_]*\s*\)\s*$/s.exec(
    query,
  );
  if (labelValues?.[1] !== undefined) return labelValues[1];
  const queryResult = /^\s*query_result\(\s*(.+)\s*\)\s*$/s.exec(query);
  return queryResult?.[1];
}

/** Every PromQL query of one dashboard: panel targets, annotations and variables. */
export function dashboardQueries(dashboard: Dashboard): DashboardQuery[] {
  const uid = dashboard.uid ?? '';
  const queries: DashboardQuery[] = [];
  for (const panel of panelsOf(dashboard)) {
    for (const target of (panel.targets ?? []) as PrometheusTarget[]) {
      if (typeof target.expr !== 'string') continue;
      queries.push({
        dashboard: uid,
        panel: panel.title ?? '',
        expr: target.expr,
        kind: 'panel',
        refId: typeof target.refId === 'string' ? target.refId : '',
        mayBeEmpty: false,
      });
    }
  }
  for (const annotation of dashboard.annotations.list ?? []) {
    if (typeof annotation.expr !== 'string') continue;
    queries.push({
      dashboard: uid,
      panel: `annotation: ${annotation.name}`,
      expr: annotation.expr,
      kind: 'annotation',
      mayBeEmpty: true,
    });
  }
  for (const variable of dashboard.templating.list ?? []) {
    if (variable.type !== 'query' || typeof variable.query !== 'string') continue;
    const expr = variablePromql(variable.query);
    if (expr === undefined) continue;
    queries.push({
      dashboard: uid,
      panel: `variable: ${variable.name}`,
      expr,
      kind: 'variable',
      mayBeEmpty: false,
    });
  }
  return queries;
}

/**
 * Every query of every generated dashboard (built in memory; the sync test guarantees the
 * committed JSON is identical). Interpolate with {@link interpolate} before sending to Prometheus.
 */
export function allDashboardQueries(): DashboardQuery[] {
  return DASHBOARDS.flatMap(({ build }) => dashboardQueries(build()));
}

/** Values for Grafana's variables when a query runs outside Grafana. */
export interface Interpolation {
  /** `$__rate_interval`, a PromQL duration. */
  rateInterval: string;
  /** `$__interval`. */
  interval: string;
  /** `$__range`. */
  range: string;
  /** `$environment`, a regex as in `environment=~"$environment"` (Grafana joins multi-values as `(a|b)`). */
  environment: string;
  /** `$instance`, a regex like `$environment`. */
  instance: string;
  /** `$location`: `.*` for All, which also matches series without a `location` label. */
  location: string;
}

/** Wide enough for one-minute pings, matches every environment and instance. */
export const DEFAULT_INTERPOLATION: Interpolation = {
  rateInterval: '5m',
  interval: '5m',
  range: '1h',
  environment: '.+',
  instance: '.+',
  location: '.*',
};

/**
 * Replaces Grafana's variables in an expression the way Grafana does for Prometheus
 * (`$name`, `${name}`), leaving plain PromQL.
 */
export function interpolate(expr: string, values: Partial<Interpolation> = {}): string {
  const v = { ...DEFAULT_INTERPOLATION, ...values };
  const table: Record<string, string> = {
    __rate_interval: v.rateInterval,
    __interval: v.interval,
    __range: v.range,
    environment: v.environment,
    instance: v.instance,
    location: v.location,
  };
  return expr.replace(/\$\{(\w+)\}|\$(\w+)/g, (match, braced?: string, bare?: string) => {
    const name = braced ?? bare ?? '';
    const value = table[name];
    if (value === undefined) throw new Error(`no value for Grafana variable ${match} in: ${expr}`);
    return value;
  });
}

const KEYWORDS = new Set([
  'and',
  'or',
  'unless',
  'bool',
  'offset',
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'inf',
  'nan',
  'atan2',
]);

/**
 * Metric names an expression selects. A small lexer, not a parser: string literals, label
 * matchers, ranges and grouping label lists are removed, then every identifier that is neither
 * a function call nor a keyword is a metric name. Enough for the dashboards' own queries; promtool
 * checks the syntax separately.
 */
export function metricNamesIn(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const names = new Set<string>();
  // The second lookahead forces a whole identifier, so "sum (" is not read as the metric "su".
  const identifier = /(?<![\w:.])([a-zA-Z_:][\w:]*)(?![\w:])(?!\s*\()/g;
  for (const match of stripped.matchAll(identifier)) {
    const name = match[1];
    if (name !== undefined && !KEYWORDS.has(name.toLowerCase())) names.add(name);
  }
  return [...names].sort();
}
