/**
 * The analytics check's row of the overview dashboard (docs/dashboards.md, "Where the rows come
 * from"): dashboards/src/overview.ts finds `dashboardRows` by the check's name in the registry and
 * places the rows in registry order (service rows). Design-time only, like every `dashboard.ts`
 * (src/checks/shared/dashboard.ts): nothing the daemon runs imports it.
 */
import {
  COLORS,
  countBarsPanel,
  fixedColor,
  linePanel,
  referenceLine,
} from '../../dashboard-kit/panels.js';
import { VARIABLES, histogramMean, increase, rate, select } from '../../dashboard-kit/promql.js';
import { runsByResultPanel, type CheckRow, type CheckRows } from '../shared/dashboard.js';
import { analyticsCheck } from './index.js';

const { interval, rateInterval } = VARIABLES;
const BY_ENV = 'environment';
const { metrics } = analyticsCheck;

/** The analytics check's row: its runs, the ingest lag and the sync. */
export const dashboardRows: CheckRows = () => [analyticsRow()];

function analyticsRow(): CheckRow {
  return {
    place: 'service',
    title: 'Analytics reporting',
    lines: [
      {
        height: 8,
        panels: [
          { panel: runsPanel(), width: 6 },
          { panel: ingestLagPanel(), width: 6 },
          { panel: lateAndMissingPanel(), width: 6 },
          { panel: syncPanel(), width: 6 },
        ],
      },
    ],
  };
}

/** Finished analytics runs per time slot, by result. */
function runsPanel() {
  return runsByResultPanel({
    title: 'Analytics runs by result',
    description:
      'Finished analytics runs (incremental sync of GET /analytics/sessions, then lookups of the synthetic sessions) per time slot, by result. Only where the analytics check is enabled. sync_incomplete means more pages than max_pages; sessions_missing, a synthetic session never reached analytics.',
    minInterval: '5m',
    runs: metrics.analyticsRuns,
    good: 'success',
  });
}

/** How long synthetic sessions take to appear in analytics, against the configured bound. */
function ingestLagPanel() {
  return linePanel({
    title: 'Analytics ingest lag',
    description:
      'Time from creating a synthetic session to its first appearance in GET /analytics/sessions/{id}: mean of the sessions that appeared, and the age of the oldest still awaited (a line that keeps rising is a stalled pipeline). The dashed line is the configured ingest_lag_bound: later sessions count as late (IsaAnalyticsIngestLagging after two in an hour). Resolution is the analytics interval.',
    unit: 's',
    minInterval: '5m',
    queries: [
      {
        expr: histogramMean(metrics.ingestLag, [BY_ENV], rateInterval),
        legend: '{{environment}} mean lag',
      },
      {
        expr: `max by (${BY_ENV}) (${select(metrics.oldestAwaiting)})`,
        legend: '{{environment}} oldest awaiting',
      },
      {
        expr: `max by (${BY_ENV}) (${select(metrics.ingestLagBound)})`,
        legend: '{{environment}} bound',
      },
    ],
  })
    .overrideByRegexp(' bound$', referenceLine(COLORS.warning))
    .min(0);
}

/** Synthetic sessions that reached analytics late, or never. */
function lateAndMissingPanel() {
  return countBarsPanel({
    title: 'Late and missing synthetic sessions',
    description:
      'Synthetic sessions that reached analytics later than ingest_lag_bound (late, counted once) or not within ingest_timeout (missing), per time slot.',
    unit: 'short',
    minInterval: '5m',
    queries: [
      {
        expr: `sum by (${BY_ENV}) (${increase(select(metrics.sessionsLate), interval)})`,
        legend: '{{environment}} late',
      },
      {
        expr: `sum by (${BY_ENV}) (${increase(select(metrics.sessionsMissing), interval)})`,
        legend: '{{environment}} missing',
      },
    ],
  })
    .axisLabel('sessions per slot')
    .overrideByRegexp(' late$', fixedColor(COLORS.warning))
    .overrideByRegexp(' missing$', fixedColor(COLORS.bad));
}

/** What the incremental sync reads, and how long it takes. */
function syncPanel() {
  return linePanel({
    title: 'Analytics sync rows and duration',
    description:
      'Session rows the incremental sync read per minute (how much the partner data changes), and the mean duration of a sync (first page to last).',
    unit: 'short',
    minInterval: '5m',
    queries: [
      {
        expr: `sum by (${BY_ENV}) (${rate(select(metrics.syncRows), rateInterval)}) * 60`,
        legend: '{{environment}} rows per minute',
      },
      {
        expr: histogramMean(metrics.syncDuration, [BY_ENV], rateInterval),
        legend: '{{environment}} sync seconds',
      },
    ],
  }).min(0);
}
