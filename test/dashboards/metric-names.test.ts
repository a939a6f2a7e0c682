/**
 * Every metric a dashboard query selects must be one the daemon exports (src/metrics/definitions.ts
 * plus the process/Node.js metrics it keeps of prom-client's defaults) or one Prometheus creates
 * (`up`, `ALERTS`), so a renamed metric or a typo cannot leave a panel silently empty.
 */
import { Histogram } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { recordingRules } from '../alerts/rules-file.js';
import { CHECK_LIST, METRICS } from '../../src/checks/index.js';
import { createMetrics } from '../../src/metrics/registry.js';
import { PROMETHEUS_METRICS, RUNTIME_METRICS } from '../../src/dashboard-kit/promql.js';
import { dashboardQueries, metricNamesIn } from '../../dashboards/src/queries.js';
import { committedDashboards } from './committed.js';

const HISTOGRAM_SERIES = ['_bucket', '_sum', '_count'] as const;

/**
 * Names of the process and Node.js metrics the daemon's registry carries (prom-client's defaults
 * less those it leaves out), read from the registry itself rather than retyped.
 */
function promClientDefaultNames(): Set<string> {
  const { registry } = createMetrics({
    checks: CHECK_LIST,
    environments: [],
    build: { version: 'test', revision: 'test', nodejs: process.version },
  });
  const names = new Set<string>();
  for (const metric of registry.getMetricsAsArray()) {
    if (metric.name.startsWith('isa_')) continue;
    // A histogram is exported as its _bucket/_sum/_count series.
    if (metric instanceof Histogram)
      for (const suffix of HISTOGRAM_SERIES) names.add(`${metric.name}${suffix}`);
    else names.add(metric.name);
  }
  registry.clear();
  return names;
}

function exportedNames(): Set<string> {
  const names = promClientDefaultNames();
  for (const definition of Object.values(METRICS)) {
    if (definition.type === 'histogram') {
      for (const suffix of HISTOGRAM_SERIES) names.add(`${definition.name}${suffix}`);
    } else {
      names.add(definition.name);
    }
  }
  // The objectives' series the shipped rules record (docs/alerts.md, "Objectives").
  for (const rule of recordingRules) if (rule.record.startsWith('slo:')) names.add(rule.record);
  names.add(PROMETHEUS_METRICS.up);
  names.add(PROMETHEUS_METRICS.alerts);
  return names;
}

describe('metric names in dashboard queries', () => {
  const exported = exportedNames();

  for (const { file, dashboard } of committedDashboards()) {
    it(`are all exported by the daemon or Prometheus (${file})`, () => {
      const unknown = dashboardQueries(dashboard).flatMap((query) =>
        metricNamesIn(query.expr)
          .filter((name) => !exported.has(name))
          .map((name) => `${query.panel}: ${name}`),
      );
      expect(unknown, 'queries select metrics nobody exports').toEqual([]);
    });

    it(`select something in every query (${file})`, () => {
      for (const query of dashboardQueries(dashboard)) {
        expect(metricNamesIn(query.expr), `${query.panel}: ${query.expr}`).not.toEqual([]);
      }
    });
  }

  it('uses runtime metric names prom-client really registers', () => {
    const defaults = promClientDefaultNames();
    for (const name of Object.values(RUNTIME_METRICS)) expect(defaults.has(name), name).toBe(true);
  });

  it('rejects a misspelt metric (the check can fail)', () => {
    const names = metricNamesIn('sum(rate(isa_ping_attempt_total{result="ok"}[5m]))');
    expect(names).toEqual(['isa_ping_attempt_total']);
    expect(exported.has('isa_ping_attempt_total')).toBe(false);
    // A histogram suffix on a non-histogram is just as wrong.
    expect(exported.has(`${METRICS.pingUp.name}_count`)).toBe(false);
  });
});

describe('metricNamesIn', () => {
  it('ignores functions, keywords, labels, strings, durations and grouping lists', () => {
    const expr =
      'max by (environment, le) (histogram_quantile(0.9, rate(a_bucket{le="1", x=~"sum(b)"}[5m] offset 1h)))' +
      ' / on (environment) group_left (level) (b_total > bool 0) unless c or vector(1e-9) and d @ start()';
    expect(metricNamesIn(expr)).toEqual(['a_bucket', 'b_total', 'c', 'd']);
  });

  it('reads names followed by whitespace and names with colons', () => {
    expect(metricNamesIn('sum (job:rate5m )  +  up')).toEqual(['job:rate5m', 'up']);
  });
});
