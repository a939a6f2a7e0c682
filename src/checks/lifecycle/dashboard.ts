/**
 * The lifecycle check's row of the overview dashboard (docs/dashboards.md, "Where the rows come
 * from"): dashboards/src/overview.ts finds `dashboardRows` by the check's name in the registry and
 * places the rows in registry order (service rows). Design-time only, like every `dashboard.ts`
 * (src/checks/shared/dashboard.ts): nothing the daemon runs imports it.
 */
import {
  COLORS,
  countBarsPanel,
  dashedThresholds,
  fixedColor,
  linePanel,
  thresholds,
} from '../../dashboard-kit/panels.js';
import {
  VARIABLES,
  histogramMean,
  increase,
  rate,
  select,
  selectHistogram,
} from '../../dashboard-kit/promql.js';
import {
  buildMetric,
  heldCountPanel,
  runsByResultPanel,
  type CheckRow,
  type CheckRows,
} from '../shared/dashboard.js';
import type { MetricDefinition } from '../../kernel/metric-definition.js';
import { lifecycleCheck } from './index.js';

const { interval, rateInterval } = VARIABLES;
const BY_ENV = 'environment';
const { metrics } = lifecycleCheck;

/**
 * The lifecycle's row: its runs and qualification, beside the synthetic sessions open (a metric of
 * every build that creates sessions, not the check's own).
 */
export const dashboardRows: CheckRows = (build) => [
  lifecycleRow(buildMetric(build, 'syntheticSessionsOpen')),
];

function lifecycleRow(sessionsOpen: MetricDefinition): CheckRow {
  return {
    place: 'service',
    title: 'Session lifecycle and qualification',
    lines: [
      {
        height: 8,
        panels: [
          { panel: runsPanel(), width: 8 },
          { panel: stepDurationsPanel(), width: 8 },
          { panel: openSessionsPanel(sessionsOpen), width: 8 },
        ],
      },
      {
        height: 8,
        panels: [
          { panel: qualifyOutcomesPanel(), width: 8 },
          { panel: qualifyPollsPanel(), width: 8 },
          { panel: timeToQualifyPanel(), width: 8 },
        ],
      },
    ],
  };
}

/** Finished synthetic session runs per time slot, by result. */
function runsPanel() {
  return runsByResultPanel({
    title: 'Lifecycle runs by result',
    description:
      "Finished synthetic session runs (create → poll until qualified → get → close → verify 410) per time slot, by result. success is the only good one; the result names the step that failed. unauthorized and rate_limited are on our side; address_validation_unavailable is the API's documented 503.",
    minInterval: '15m',
    runs: metrics.lifecycleRuns,
    good: 'success',
  });
}

/** The mean duration of each lifecycle step. */
function stepDurationsPanel() {
  return linePanel({
    title: 'Lifecycle step durations (mean)',
    description:
      'Mean duration of each lifecycle step. poll spans the whole polling loop until a final qualify status (typically 20–30 s, give-up at 90 s), so it dominates; a slow create, get or close points at the session endpoints themselves.',
    unit: 's',
    minInterval: '15m',
    queries: [
      {
        expr: histogramMean(metrics.lifecycleStepDuration, [BY_ENV, 'step'], rateInterval),
        legend: '{{environment}} {{step}}',
      },
    ],
  });
}

/** Sessions this monitor created and has not yet seen closed. */
function openSessionsPanel(sessionsOpen: MetricDefinition) {
  return heldCountPanel({
    title: 'Open synthetic sessions',
    description:
      'Sessions this monitor created and has not yet seen closed. It rises to 1 during a run and must return to 0; a floor above 0 means sessions leak (closing failed), which IsaSyntheticSessionsLeaking reports.',
    unit: 'short',
    queries: [
      {
        expr: `max by (${BY_ENV}) (${select(sessionsOpen)})`,
        legend: '{{environment}}',
      },
    ],
  });
}

/** The final qualify status of each run. */
function qualifyOutcomesPanel() {
  return countBarsPanel({
    title: 'Qualify outcomes',
    description:
      'Final qualify status of each run: available (providers found), no_service (none serve the address), failed (lookup errored) and timeout (gave up after 90 s: the answer is unknown, not no-service). A rising share of timeouts is IsaQualifyTimeoutsRising.',
    unit: 'short',
    minInterval: '15m',
    queries: [
      {
        expr: `sum by (${BY_ENV}, status) (${increase(select(metrics.qualifyOutcomes), interval)})`,
        legend: '{{environment}} {{status}}',
      },
    ],
  })
    .axisLabel('runs per slot')
    .overrideByRegexp(' available$', fixedColor(COLORS.good))
    .overrideByRegexp(' no_service$', fixedColor(COLORS.neutral))
    .overrideByRegexp(' failed$', fixedColor(COLORS.bad))
    .overrideByRegexp(' timeout$', fixedColor(COLORS.warning));
}

/** The qualify status of every creation and poll response. */
function qualifyPollsPanel() {
  return countBarsPanel({
    title: 'Qualify poll statuses',
    description:
      'qualify_status of every creation and poll response. Mostly pending while a lookup runs; many retry_later answers mean the API has transient upstream trouble even when runs still finish.',
    unit: 'short',
    minInterval: '15m',
    queries: [
      {
        expr: `sum by (${BY_ENV}, status) (${increase(select(metrics.qualifyPolls), interval)})`,
        legend: '{{environment}} {{status}}',
      },
    ],
  }).axisLabel('responses per slot');
}

/** Time from session creation to the final qualify status. */
function timeToQualifyPanel() {
  return linePanel({
    title: 'Time to qualify',
    description:
      'Time from session creation to the final qualify status: mean and 90th percentile. Dashed lines: 30 s (upper end of typical), 45 s (early warning), 90 s (the monitor gives up and records a timeout). Runs come every few minutes, so each point summarises only a few runs.',
    unit: 's',
    minInterval: '15m',
    queries: [
      {
        expr: histogramMean(metrics.qualifyDuration, [BY_ENV], rateInterval),
        legend: '{{environment}} mean',
      },
      {
        expr: `histogram_quantile(0.9, sum by (${BY_ENV}, le) (${rate(selectHistogram(metrics.qualifyDuration, 'bucket'), rateInterval)}))`,
        legend: '{{environment}} p90',
      },
    ],
  })
    .thresholdsStyle(dashedThresholds())
    .thresholds(
      thresholds(COLORS.good, [
        [30, COLORS.elevated],
        [45, COLORS.warning],
        [90, COLORS.bad],
      ]),
    )
    .axisSoftMax(100)
    .min(0);
}
